# shellcheck shell=bash
# Sourced by scripts/clusters: the services behind the target's GSSAPI and
# OIDC listeners (tests/sasl_services.rs), each opt-in because plain
# `scripts/clusters start` should stay as quick as it is.
#
#   MM_KERBEROS=1  a private MIT Kerberos KDC, realm MIRROR.TEST, on
#                  127.0.0.1:MM_TARGET_PORT+7 (TCP and UDP), with its own
#                  krb5.conf, kdc.conf, database and keytabs under
#                  <clusters dir>/kerberos (nothing system-wide is touched:
#                  every tool gets KRB5_CONFIG / KRB5_KDC_PROFILE).
#                  Principals: kafka/127.0.0.1@MIRROR.TEST for the broker
#                  (librdkafka names the broker by the host of its address,
#                  127.0.0.1; krb5.conf turns off canonicalisation so it stays
#                  that), mirror@MIRROR.TEST for the client, a keytab each.
#   MM_OIDC=1      a token endpoint (scripts/lib/oidc-token-endpoint.py) on
#                  127.0.0.1:MM_TARGET_PORT+8: client_credentials tokens at
#                  /token (RS256 JWTs), the key set at /jwks.
#
# Needs (Debian): krb5-kdc krb5-admin-server krb5-user for the KDC,
# python3 and openssl for the token endpoint. Uses log, die, launch_detached,
# pid_from_file, stop_pid and port_in_use from scripts/lib/cluster.sh.

KRB_REALM=MIRROR.TEST
KRB_BROKER_PRINCIPAL="kafka/127.0.0.1@$KRB_REALM"
KRB_CLIENT_PRINCIPAL="mirror@$KRB_REALM"
OIDC_CLIENT_ID=mirror-maker-test
OIDC_CLIENT_SECRET=mirror-maker-test-secret
OIDC_SCOPE=kafka-mirror
OIDC_AUDIENCE=kafka-test-target

# Also while the service runs: a restart-broker from an environment without
# the variable must bring the target back with the same listeners.
kerberos_wanted() { [[ "${MM_KERBEROS:-0}" == 1 || -n "$(kdc_pid)" ]]; }
oidc_wanted() { [[ "${MM_OIDC:-0}" == 1 || -n "$(oidc_pid)" ]]; }

# Under the clusters dir, beside the clusters: `stop` removes them with the rest.
kerberos_dir() { echo "$CLUSTERS_DIR/kerberos"; }
oidc_dir() { echo "$CLUSTERS_DIR/oidc"; }
kdc_port() { echo $(($(broker_port target) + 7)); }
oidc_port() { echo $(($(broker_port target) + 8)); }
gssapi_port() { echo $(($(broker_port target) + 5)); }
oidc_listener_port() { echo $(($(broker_port target) + 6)); }

# The running KDC and token endpoint, told apart by their config paths.
kdc_pid() { pid_from_file "$(kerberos_dir)/kdc.pid" "krb5kdc -n"; }
oidc_pid() { pid_from_file "$(oidc_dir)/pid" "oidc-token-endpoint.py"; }

# Writes krb5.conf and kdc.conf, creates the database, both principals and
# their keytabs, and starts krb5kdc in the foreground (-n) under
# launch_detached. Kept from one start to the next only while it runs.
start_kdc() {
    local dir port
    dir="$(kerberos_dir)"
    port="$(kdc_port)"
    [[ -n "$(kdc_pid)" ]] && return 0
    local tool
    for tool in krb5kdc kdb5_util kadmin.local kinit; do
        command -v "$tool" >/dev/null 2>&1 ||
            die "$tool not found (MM_KERBEROS=1 needs: apt-get install krb5-kdc krb5-admin-server krb5-user)"
    done
    port_in_use "$port" && die "port $port (the KDC, MM_TARGET_PORT+7) on 127.0.0.1 is already in use; set MM_TARGET_PORT to another port"
    rm -rf "$dir"
    mkdir -p "$dir"
    # dns_canonicalize_hostname/rdns off: the client asks for a ticket to
    # kafka/127.0.0.1 exactly, not to whatever 127.0.0.1 resolves back to.
    cat >"$dir/krb5.conf" <<EOF
[libdefaults]
    default_realm = $KRB_REALM
    dns_lookup_realm = false
    dns_lookup_kdc = false
    dns_canonicalize_hostname = false
    rdns = false
    ignore_acceptor_hostname = true
    udp_preference_limit = 1
    forwardable = true
[realms]
    $KRB_REALM = {
        kdc = 127.0.0.1:$port
    }
EOF
    cat >"$dir/kdc.conf" <<EOF
[kdcdefaults]
    kdc_ports = $port
    kdc_tcp_ports = $port
[realms]
    $KRB_REALM = {
        database_name = $dir/principal
        key_stash_file = $dir/stash
        acl_file = $dir/kadm5.acl
        max_life = 1d
        supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
    }
[logging]
    kdc = FILE:$dir/kdc.log
EOF
    : >"$dir/kadm5.acl"
    (
        export KRB5_CONFIG="$dir/krb5.conf" KRB5_KDC_PROFILE="$dir/kdc.conf"
        kdb5_util create -s -r "$KRB_REALM" -P "mirror-maker-test-master-$RANDOM$RANDOM"
        kadmin.local -r "$KRB_REALM" -q "addprinc -randkey $KRB_BROKER_PRINCIPAL"
        kadmin.local -r "$KRB_REALM" -q "addprinc -randkey $KRB_CLIENT_PRINCIPAL"
        kadmin.local -r "$KRB_REALM" -q "ktadd -k $dir/broker.keytab $KRB_BROKER_PRINCIPAL"
        kadmin.local -r "$KRB_REALM" -q "ktadd -k $dir/client.keytab $KRB_CLIENT_PRINCIPAL"
    ) >"$dir/setup.log" 2>&1 || { cat "$dir/setup.log" >&2; die "creating the Kerberos database in $dir failed"; }
    # -n: in the foreground, so the pid file launch_detached writes is its.
    KRB5_CONFIG="$dir/krb5.conf" KRB5_KDC_PROFILE="$dir/kdc.conf" launch_detached "$dir/kdc.pid" "$dir/kdc.out" krb5kdc -n
    local deadline=$((SECONDS + 30))
    # Ready once it hands out a ticket for the client's keytab.
    until KRB5_CONFIG="$dir/krb5.conf" KRB5CCNAME="FILE:$dir/probe.ccache" kinit -k -t "$dir/client.keytab" "$KRB_CLIENT_PRINCIPAL" 2>/dev/null; do
        ((SECONDS < deadline)) || { cat "$dir/kdc.out" "$dir/kdc.log" >&2 2>/dev/null; die "the KDC on 127.0.0.1:$port did not issue a ticket within 30s"; }
        sleep 0.3
    done
    rm -f "$dir/probe.ccache"
    log "Kerberos KDC for $KRB_REALM on 127.0.0.1:$port (dir $dir)"
}

start_oidc() {
    local dir port
    dir="$(oidc_dir)"
    port="$(oidc_port)"
    [[ -n "$(oidc_pid)" ]] && return 0
    command -v python3 >/dev/null 2>&1 || die "python3 not found (MM_OIDC=1 needs it for the token endpoint)"
    port_in_use "$port" && die "port $port (the OIDC token endpoint, MM_TARGET_PORT+8) on 127.0.0.1 is already in use; set MM_TARGET_PORT to another port"
    rm -rf "$dir"
    mkdir -p "$dir"
    launch_detached "$dir/pid" "$dir/out.log" python3 "$MM_SCRIPTS_DIR/lib/oidc-token-endpoint.py" \
        "$port" "$dir" "$OIDC_CLIENT_ID" "$OIDC_CLIENT_SECRET" "$OIDC_SCOPE" "$OIDC_AUDIENCE"
    local deadline=$((SECONDS + 30))
    # The broker fetches the key set when it starts: have it served first.
    until python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=2)" "http://127.0.0.1:$port/jwks" 2>/dev/null; do
        ((SECONDS < deadline)) || { cat "$dir/out.log" >&2; die "the OIDC token endpoint on 127.0.0.1:$port did not answer within 30s"; }
        sleep 0.3
    done
    log "OIDC token endpoint on http://127.0.0.1:$port (dir $dir)"
}

# Both, as asked; before the target broker, which needs them at start.
start_sasl_services() {
    if kerberos_wanted; then start_kdc; fi
    if oidc_wanted; then start_oidc; fi
}

stop_sasl_services() {
    local pid
    pid="$(kdc_pid)"
    if [[ -n "$pid" ]]; then
        log "stopping the KDC (pid $pid)"
        stop_pid "$pid" "KDC"
    fi
    pid="$(oidc_pid)"
    if [[ -n "$pid" ]]; then
        log "stopping the OIDC token endpoint (pid $pid)"
        stop_pid "$pid" "OIDC token endpoint"
    fi
}

# The target's extra listeners, as name://host:port for listeners= and
# name:protocol for the protocol map, one per line; nothing unless asked.
sasl_listeners() {
    if kerberos_wanted; then echo "GSSAPI://127.0.0.1:$(gssapi_port) GSSAPI:SASL_PLAINTEXT"; fi
    if oidc_wanted; then echo "OIDC://127.0.0.1:$(oidc_listener_port) OIDC:SASL_PLAINTEXT"; fi
}

# server.properties lines for those listeners.
sasl_listener_props() {
    if kerberos_wanted; then
        cat <<EOF
listener.name.gssapi.sasl.enabled.mechanisms=GSSAPI
listener.name.gssapi.sasl.kerberos.service.name=kafka
listener.name.gssapi.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="$(kerberos_dir)/broker.keytab" principal="$KRB_BROKER_PRINCIPAL";
EOF
    fi
    if oidc_wanted; then
        cat <<EOF
listener.name.oidc.sasl.enabled.mechanisms=OAUTHBEARER
listener.name.oidc.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;
listener.name.oidc.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
listener.name.oidc.sasl.oauthbearer.jwks.endpoint.url=http://127.0.0.1:$(oidc_port)/jwks
listener.name.oidc.sasl.oauthbearer.expected.audience=$OIDC_AUDIENCE
EOF
    fi
}

# JVM flags of the target broker: the KDC's krb5.conf (the JVM reads no
# KRB5_CONFIG) and the JWKS URL Kafka may fetch.
sasl_jvm_flags() {
    if kerberos_wanted; then echo "-Djava.security.krb5.conf=$(kerberos_dir)/krb5.conf"; fi
    if oidc_wanted; then echo "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=http://127.0.0.1:$(oidc_port)/jwks"; fi
}

# NAME=value lines `start` prints for the target (see scripts/clusters).
sasl_lines() {
    if kerberos_wanted; then
        echo "TARGET_GSSAPI_BOOTSTRAP=127.0.0.1:$(gssapi_port)"
        echo "TARGET_KRB5_CONF=$(kerberos_dir)/krb5.conf"
        echo "TARGET_KEYTAB=$(kerberos_dir)/client.keytab"
        echo "TARGET_PRINCIPAL=$KRB_CLIENT_PRINCIPAL"
    fi
    if oidc_wanted; then
        echo "TARGET_OIDC_BOOTSTRAP=127.0.0.1:$(oidc_listener_port)"
        echo "TARGET_OIDC_TOKEN_URL=http://127.0.0.1:$(oidc_port)/token"
        echo "TARGET_OIDC_CLIENT_ID=$OIDC_CLIENT_ID"
        echo "TARGET_OIDC_CLIENT_SECRET=$OIDC_CLIENT_SECRET"
        echo "TARGET_OIDC_SCOPE=$OIDC_SCOPE"
    fi
}
