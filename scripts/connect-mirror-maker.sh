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
# The binary is found as kafka-mirror-maker.sh, installed beside this
# script, finds it: MIRROR_MAKER_BIN, else beside the scripts, else PATH.
set -euo pipefail

if [[ $# -lt 1 || "$1" == -* ]]; then
    echo "usage: connect-mirror-maker.sh mm2.properties [--clusters A B ...]" >&2
    exit 1
fi
config="$1"
shift
# kafka-mirror-maker.sh, beside this script, finds the binary (one lookup
# for both drop-ins) and passes the arguments on unsplit.
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-mirror-maker.sh" --mm2.config "$config" "$@"
