# shellcheck shell=bash
# Sourced by scripts/clusters (KRaft) and scripts/zk-cluster (ZooKeeper mode):
# what both need to run single-node Kafka brokers on loopback from the jars
# of scripts/kafka-env. Set CL_NAME (the prefix of log lines) after sourcing.
#
# Files a broker leaves, by convention of the callers:
#   <dir>/server.properties   written from a template (render_template)
#   <pid file>                the JVM's pid, written by the JVM's own shell
#   <log dir>/server.log      broker log4j output (kafka.logs.dir)
#   <stdout file>             the JVM's stdout and stderr
#
# Like kafka-env, no `set -euo pipefail` here: the scripts that source this
# set their own options.

# shellcheck source=scripts/kafka-env
. "$(dirname "${BASH_SOURCE[0]}")/../kafka-env"

CL_NAME="$(basename "${BASH_SOURCE[-1]}")"
# shellcheck disable=SC2034 # read by the scripts that source this
START_TIMEOUT=120
STOP_TIMEOUT=30

log() { echo "$CL_NAME: $*" >&2; }
die() { echo "$CL_NAME: error: $*" >&2; exit 1; }

# Prints the calling script's header comment (line 2 up to `set -euo`).
usage() {
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[-1]}" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

# Takes lock FILE on fd 9 for the rest of the script (serialises concurrent
# start/stop runs); MESSAGE is the error when it stays taken for 300 s. The
# brokers are started with fd 9 closed, so they never hold it.
take_lock() {
    exec 9>"$1"
    flock -w 300 9 || die "$2"
}

# A process that has exited but not been reaped still answers kill -0; PID 1
# in some containers never reaps, so look at the state instead.
is_alive() {
    local stat
    stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
    stat="${stat##*) }"
    [[ "${stat%% *}" != Z ]]
}

# True if PID is alive and its command line contains NEEDLE (pids get reused,
# so a pid file alone proves nothing).
pid_matches() {
    local pid="$1" needle="$2" cmdline
    is_alive "$pid" || return 1
    cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
    [[ "$cmdline" == *"$needle"* ]]
}

# Prints the pid recorded in FILE if that process still runs with NEEDLE on
# its command line, else nothing.
pid_from_file() {
    local pid
    pid="$(cat "$1" 2>/dev/null || true)"
    if [[ -n "$pid" ]] && pid_matches "$pid" "$2"; then
        echo "$pid"
    fi
    return 0
}

# Connecting tells whether anything listens, with no dependency on ss/netstat
# (absent from minimal Debian images).
port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Waits until none of PORTS on 127.0.0.1 is in use; 1 once SECONDS passes
# DEADLINE.
wait_ports_free() {
    local deadline="$1" port
    shift
    for port in "$@"; do
        while port_in_use "$port"; do
            ((SECONDS < deadline)) || return 1
            sleep 0.2
        done
    done
}

# wait_until DEADLINE ALIVE READY [ARG...]: polls READY ARG... every 0.3 s.
# Returns 0 once it succeeds, 1 as soon as ALIVE ARG... fails (the process
# died: no point waiting), 2 once SECONDS passes DEADLINE.
wait_until() {
    local deadline="$1" alive="$2" ready="$3"
    shift 3
    while :; do
        "$alive" "$@" || return 1
        "$ready" "$@" && return 0
        ((SECONDS < deadline)) || return 2
        sleep 0.3
    done
}

# Ready means the broker answers a metadata request and lists itself, i.e. it
# has caught up with its controller (or ZooKeeper) and been unfenced. No topic
# is named in the request because that could auto-create it.
broker_answers() {
    port_in_use "$1" &&
        kcat -L -b "127.0.0.1:$1" -m 2 -J 2>/dev/null | grep -q '"brokers":\[{"id":1,'
}

# launch_detached PIDFILE OUTFILE COMMAND...: starts COMMAND in the background
# with stdout and stderr in OUTFILE and returns once PIDFILE names it.
# setsid: the process must outlive the calling script and not get the
# terminal's SIGINT/SIGHUP; stopping it is the script's `stop`. The inner
# shell records its own pid before exec, so the pid file names the JVM
# whether or not setsid had to fork. fd 9 (the caller's lock) must not leak
# into it.
launch_detached() {
    local pidfile="$1" out="$2" deadline
    shift 2
    rm -f "$pidfile"
    # shellcheck disable=SC2016
    setsid bash -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$pidfile" "$@" \
        </dev/null >"$out" 2>&1 9>&- &
    # The pid file is what `stop` goes by; have it before anyone asks.
    deadline=$((SECONDS + 30))
    while [[ ! -f "$pidfile" ]]; do
        ((SECONDS < deadline)) || die "no pid file $pidfile 30 s after starting $1"
        sleep 0.05
    done
}

# start_broker_jvm PIDFILE OUTFILE LOGDIR PROPERTIES [JVM_FLAG...]: a Kafka
# broker (kafka.Kafka) on PROPERTIES, its log4j files in LOGDIR.
# MM_BROKER_HEAP_OPTS replaces the heap flags.
start_broker_jvm() {
    local pidfile="$1" out="$2" logdir="$3" props="$4"
    shift 4
    # Word splitting is intended: space-separated JVM flags.
    # shellcheck disable=SC2086
    launch_detached "$pidfile" "$out" \
        java ${MM_BROKER_HEAP_OPTS:--Xms256m -Xmx512m} "$@" -Djava.awt.headless=true \
        "-Dlog4j.configuration=file:$KAFKA_BROKER_LOG4J" "-Dkafka.logs.dir=$logdir" \
        -cp "$KAFKA_LIBS/*" kafka.Kafka "$props"
}

# stop_pid PID WHAT: SIGTERM, then SIGKILL after STOP_TIMEOUT seconds; returns
# once the process is gone.
stop_pid() {
    local pid="$1" what="$2" deadline
    kill -TERM "$pid" 2>/dev/null || true
    deadline=$((SECONDS + STOP_TIMEOUT))
    while is_alive "$pid" && ((SECONDS < deadline)); do
        sleep 0.2
    done
    if is_alive "$pid"; then
        log "$what ignored SIGTERM for ${STOP_TIMEOUT}s, sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        while is_alive "$pid"; do
            sleep 0.1
        done
    fi
}

# A dying broker ends its log with pages of orderly shutdown; the cause is in
# the first ERROR lines and the exception right after them.
# show_broker_logs LOGDIR [OUTFILE]
show_broker_logs() {
    log "first errors in $1/server.log:"
    grep -A 3 -m 3 -E '^\[[^]]*\] (ERROR|FATAL) ' "$1/server.log" >&2 2>/dev/null || true
    if [[ -n "${2:-}" && -s "$2" ]]; then
        log "last lines of $2:"
        tail -n 20 "$2" >&2
    fi
}

# render_template TEMPLATE [NAME=VALUE...]: prints TEMPLATE with every
# @NAME@ replaced by VALUE (taken literally, never scanned again). A line that
# is only @NAME@ becomes VALUE's lines, or nothing when VALUE is empty.
# Lines starting with ## are notes on the template and are left out. An
# @NAME@ with no value given is an error, so a typo cannot slip through.
render_template() {
    local template="$1" kv line out name n=0
    shift
    local -A vars=()
    for kv in "$@"; do
        vars["${kv%%=*}"]="${kv#*=}"
    done
    [[ -r "$template" ]] || { log "error: template $template not found"; return 1; }
    while IFS= read -r line || [[ -n "$line" ]]; do
        n=$((n + 1))
        [[ "$line" == '##'* ]] && continue
        if [[ "$line" =~ ^@([A-Z][A-Z0-9_]*)@$ && -v "vars[${BASH_REMATCH[1]}]" ]]; then
            [[ -n "${vars[${BASH_REMATCH[1]}]}" ]] && printf '%s\n' "${vars[${BASH_REMATCH[1]}]}"
            continue
        fi
        out=""
        while [[ "$line" =~ @([A-Z][A-Z0-9_]*)@ ]]; do
            name="${BASH_REMATCH[1]}"
            if [[ ! -v "vars[$name]" ]]; then
                log "error: $template:$n: no value for @$name@"
                return 1
            fi
            out+="${line%%"@$name@"*}${vars[$name]}"
            line="${line#*"@$name@"}"
        done
        printf '%s\n' "$out$line"
    done <"$template"
}
