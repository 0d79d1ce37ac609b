#!/usr/bin/env bash
# Drop-in for Kafka's bin/kafka-mirror-maker.sh: install it under the old
# path (or put it first in PATH) and existing cron lines, wrappers and
# systemd units keep working unchanged. The JVM variables the old script
# read (KAFKA_HEAP_OPTS, KAFKA_OPTS, KAFKA_LOG4J_OPTS, …) have no meaning for
# a native binary and are ignored.
#
# The binary is taken from MIRROR_MAKER_BIN, else from beside this script,
# else from PATH.
set -euo pipefail

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
    echo "kafka-mirror-maker.sh: mirror-maker binary not found: set MIRROR_MAKER_BIN, put it beside this script or in PATH" >&2
    exit 1
fi
# "$@" quoted: unlike the 0.8/0.9 script, a regex is never word-split or globbed.
exec "$bin" "$@"
