#!/usr/bin/env bash
# Drop-in for Kafka's bin/connect-mirror-maker.sh (MirrorMaker 2, dedicated
# mode): `connect-mirror-maker.sh mm2.properties [--clusters A B ...]`, the
# same arguments as Java's, run by the native binary as
# `mirror-maker --mm2.config mm2.properties [--clusters A B ...]`. Options
# of this mirror (--check-config, --log.file, --pid.file, --metrics.port,
# --stats.interval.ms, --drain.timeout.ms) may follow. The JVM variables the
# old script read (KAFKA_HEAP_OPTS, KAFKA_OPTS, KAFKA_LOG4J_OPTS, ...) have
# no meaning for a native binary and are ignored.
#
# The binary is taken from MIRROR_MAKER_BIN, else from beside this script,
# else from PATH.
set -euo pipefail

if [[ $# -lt 1 || "$1" == -* ]]; then
    echo "usage: connect-mirror-maker.sh mm2.properties [--clusters A B ...]" >&2
    exit 1
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${MIRROR_MAKER_BIN:-}"
if [[ -z "$bin" ]]; then
    for candidate in "$here/mirror-maker" "$here/../target/release/mirror-maker"; do
        if [[ -x "$candidate" ]]; then
            bin="$candidate"
            break
        fi
    done
fi
if [[ -z "$bin" ]]; then
    bin="$(command -v mirror-maker || true)"
fi
if [[ -z "$bin" ]]; then
    echo "connect-mirror-maker.sh: mirror-maker binary not found: set MIRROR_MAKER_BIN, put it beside this script or in PATH" >&2
    exit 1
fi
config="$1"
shift
exec "$bin" --mm2.config "$config" "$@"
