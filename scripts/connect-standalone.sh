#!/usr/bin/env bash
# Drop-in for Kafka's bin/connect-standalone.sh, for MirrorMaker 2's
# connectors: `connect-standalone.sh worker.properties [connector1.properties
# connector2.json ...]`, Java's arguments in Java's order, run by the native
# binary as `mirror-maker --connect.standalone worker.properties ...`. The
# worker keeps its source positions in offset.storage.file.filename (Java's
# own file format, so Java's standalone worker and this one take over from
# each other), starts the connectors of the files, and serves Connect's REST
# API where `listeners` says (default http://:8083); configs PUT there live
# in memory, as in Java's standalone mode. The JVM variables the old script
# read (KAFKA_HEAP_OPTS, KAFKA_OPTS, ...) have no meaning for a native binary
# and are ignored; so is -daemon.
#
# The binary is found as kafka-mirror-maker.sh, installed beside this
# script, finds it: MIRROR_MAKER_BIN, else beside the scripts, else PATH.
set -euo pipefail

if [[ "${1:-}" == "-daemon" ]]; then
    echo "connect-standalone.sh: -daemon is ignored; run it under systemd or nohup" >&2
    shift
fi
if [[ $# -lt 1 || "$1" == -* ]]; then
    echo "usage: connect-standalone.sh worker.properties [connector1.properties connector2.json ...]" >&2
    exit 1
fi
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-mirror-maker.sh" --connect.standalone "$@"
