#!/usr/bin/env bash
# Drop-in for Kafka's bin/connect-distributed.sh, for MirrorMaker 2's
# connectors: `connect-distributed.sh worker.properties`, the same argument
# as Java's, run by the native binary as
# `mirror-maker --connect.distributed worker.properties`. The worker serves
# Connect's REST API where `listeners` says (default http://:8083) and runs
# MirrorSourceConnector, MirrorCheckpointConnector and
# MirrorHeartbeatConnector; other connector classes are refused. The JVM
# variables the old script read (KAFKA_HEAP_OPTS, KAFKA_OPTS, ...) have no
# meaning for a native binary and are ignored; so is -daemon.
#
# The binary is found as kafka-mirror-maker.sh, installed beside this
# script, finds it: MIRROR_MAKER_BIN, else beside the scripts, else PATH.
set -euo pipefail

if [[ "${1:-}" == "-daemon" ]]; then
    echo "connect-distributed.sh: -daemon is ignored; run it under systemd or nohup" >&2
    shift
fi
if [[ $# -ne 1 || "$1" == -* ]]; then
    echo "usage: connect-distributed.sh worker.properties" >&2
    exit 1
fi
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-mirror-maker.sh" --connect.distributed "$1"
