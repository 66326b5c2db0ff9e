# shellcheck shell=bash
# The pulsar service of scripts/services.sh (sourced by it). Exports:
#   pulsar    BABELQUEUE_PULSAR_URL        pulsar://127.0.0.1:<port> (Apache Pulsar 4.0.0
#                                          standalone: broker, one bookie, RocksDB metadata; tenant
#                                          public, namespace public/default; topics and
#                                          subscriptions are created on first use, topics are
#                                          non-partitioned and never deleted for inactivity;
#                                          messages up to 5 MiB, no deduplication, delayed
#                                          delivery never early and about 100 ms late at most,
#                                          every acknowledgement written to the bookie at once.
#                                          The readiness probe leaves the topic
#                                          persistent://public/default/bq-probe, with no
#                                          subscription)
#             BABELQUEUE_PULSAR_TLS_URL    pulsar+ssl://localhost:<port> (the binary protocol over
#                                          TLS on 127.0.0.1; server certificate DNS:localhost and
#                                          IP:127.0.0.1 signed by the CA below; lookups tell the
#                                          client to stay on the URL it connected to; no client
#                                          certificate asked for)
#             BABELQUEUE_PULSAR_TLS_CA     PEM of the throwaway CA that signed the server
#                                          certificate
#             BABELQUEUE_PULSAR_TOKEN      a JWT (HS256, subject bq-client) the standalone accepts:
#                                          token authentication is on (a client that presents a
#                                          token must present a valid one), and a client that
#                                          presents none is the anonymous role (authorization
#                                          is off, so every other test connects as before)
#             BABELQUEUE_PULSAR_ADMIN_URL  http://127.0.0.1:<port>, the web service: REST admin API
#                                          (/admin/v2/...) and WebSocket API
#                                          (ws://127.0.0.1:<port>/ws/v2/producer|consumer/...;
#                                          8 MiB frames, so a 5 MiB message fits in base64)
#             BABELQUEUE_PULSAR_LIBS       the standalone's jar directory (pulsar-broker and its
#                                          runtime dependencies; no pulsar-testclient, so no
#                                          PerformanceProducer; the Java client and admin client
#                                          are there: java -cp "$BABELQUEUE_PULSAR_LIBS/*" ...)
#             BABELQUEUE_PULSAR_CTL        "$BABELQUEUE_PULSAR_CTL" stop | kill | start | restart |
#                                          kill-restart | pid like the Kafka one (topics,
#                                          messages and subscription cursors survive, also a
#                                          SIGKILL: the bookie journals every entry before it is
#                                          acknowledged; a start after a SIGKILL that hits the
#                                          standalone's bookie-registration loop (4.0.0 and
#                                          4.0.1) is healed by one graceful restart, see
#                                          pulsar_helpers_start)
#
# Apache Pulsar 4.0.0 standalone (org.apache.pulsar.PulsarStandaloneStarter: broker, one
# BookKeeper bookie and a RocksDB metadata store in one JVM, no ZooKeeper, no functions
# worker, no stream storage) run straight from the Maven Central jars of
# scripts/pulsar/pom.xml (pulsar-broker and its runtime dependencies, no release tarball),
# downloaded once (mvn dependency:copy-dependencies, about 230 MB in 312 jars) into
# ${BABELQUEUE_CACHE_DIR:-~/.cache/babelqueue}/pulsar-<hash of the pom>/libs and reused by every
# run while the pom is unchanged (pom_jars, downloads.sh). Config (scripts/pulsar/standalone.conf plus the
# ports and paths of the run), data (DIR/data: bookie journal and ledgers, metadata) and log
# live in the run directory. Four free loopback ports, all bound to 127.0.0.1: the binary
# protocol, the same with TLS (tls_material's server certificate, PKCS#8 PEM key; no client
# certificate asked for), the web service (REST admin API and WebSocket API) and the bookie.
# Persistent: topics, messages and subscription cursors survive a restart and a SIGKILL.
pulsar_version=4.0.0
pulsar_pom=$repo/scripts/pulsar/pom.xml
pulsar_class='org\.apache\.pulsar\.PulsarStandaloneStarter'

# loopback_interface: the name of the loopback network interface (lo), for the bookie's
# listeningInterface.
loopback_interface() {
  local i flags
  for i in /sys/class/net/*; do
    flags=$(cat "$i/flags" 2>/dev/null) || continue
    ((flags & 0x8)) && { basename "$i"; return 0; }  # IFF_LOOPBACK
  done
  die "no loopback network interface in /sys/class/net"
}

# pulsar_launch DIR: starts the standalone of DIR (configured by pulsar_start) on its ports
# and data.
pulsar_launch() {
  local dir=$1 libs bookie
  libs=$(jars_of "$dir" Pulsar pulsar) || exit 1
  read -r _ _ _ bookie <"$dir/ports"
  echo "[$(date '+%F %T')] services.sh: starting the standalone" >>"$dir/pulsar.log"
  # pulsar_ready reads the log from here on (a restarted broker appends to the old log)
  log_mark "$dir/pulsar.log" "$dir/log-offset"
  : >"$dir/probe.log"
  # --zookeeper-dir names a directory that must never exist: the standalone runs on
  # ZooKeeper (port 2181) instead of RocksDB when it does, or when
  # PULSAR_STANDALONE_USE_ZOOKEEPER is set. The --add-opens are those of Pulsar's bin/pulsar.
  launch "$dir/pulsar.pid" "$dir/pulsar.log" -- \
    env -u PULSAR_STANDALONE_USE_ZOOKEEPER \
    java -Xms256m -Xmx768m -XX:MaxDirectMemorySize=256m -Djava.awt.headless=true \
    --add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.util.zip=ALL-UNNAMED \
    --add-opens java.base/sun.net=ALL-UNNAMED \
    --add-opens java.management/sun.management=ALL-UNNAMED \
    --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED \
    --add-opens java.base/jdk.internal.platform=ALL-UNNAMED \
    --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED \
    --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -Dio.netty.tryReflectionSetAccessible=true \
    -Dlog4j2.configurationFile="$dir/log4j2.properties" \
    -cp "$libs/*" org.apache.pulsar.PulsarStandaloneStarter --config "$dir/standalone.conf" \
    --no-functions-worker --no-stream-storage --num-bookies 1 --bookkeeper-port "$bookie" \
    --bookkeeper-dir "$dir/data/bookkeeper" --metadata-dir "$dir/data/metadata" \
    --zookeeper-dir "$dir/data/no-zookeeper"
}

# pulsar_probe DIR PORT [--tls CA]: a produce round trip (scripts/pulsar/probe.py); its
# complaint goes to DIR/probe.log, its summary line to DIR/probe.out.
pulsar_probe() {
  local dir=$1 port=$2
  shift 2
  python3 "$repo/scripts/pulsar/probe.py" 127.0.0.1 "$port" "$@" \
    >"$dir/probe.out" 2>>"$dir/probe.log" </dev/null 9>&-
}

# pulsar_ready DIR: the REST admin API lists the namespace public/default and a message can
# be produced over the binary protocol, plainly and over TLS (verifying the server
# certificate against the CA for the name localhost); 2 when the JVM is gone, or one of its
# ports was taken (then the JVM is stopped).
pulsar_ready() {
  local dir=$1 broker web tls bookie
  launched "$dir/pulsar.pid" "$pulsar_class" "the Pulsar standalone" || return
  read -r broker web tls bookie <"$dir/ports"
  if log_since "$dir/pulsar.log" "$dir/log-offset" |
      grep -q 'BindException\|Address already in use'; then
    echo "services: ERROR: one of the Pulsar ports ($broker $web $tls $bookie) is taken" >&2
    stop_pid "$dir/pulsar.pid" "$pulsar_class" 5 group
    return 2
  fi
  curl -sf --max-time 3 "http://127.0.0.1:$web/admin/v2/namespaces/public" 2>/dev/null \
    </dev/null 9>&- | grep -q '"public/default"' || return 1
  pulsar_probe "$dir" "$broker" && pulsar_probe "$dir" "$tls" --tls "$dir/tls/ca.pem"
}

pulsar_start() {
  local dir=$1 broker web tls bookie lo t0 f
  for f in java curl openssl; do
    command -v "$f" >/dev/null || die "$f not found (scripts/apt-packages.txt)"
  done
  lo=$(loopback_interface) || return 1
  pom_jars pulsar "$pulsar_pom" "pulsar-broker-$pulsar_version.jar" || return 1
  local pulsar_libs=$jars_dir
  read -r broker web tls bookie < <(free_ports 4)
  echo "$broker $web $tls $bookie" >"$dir/ports"
  echo "$pulsar_libs" >"$dir/libs"
  mkdir -p "$dir/data" "$dir/tls"
  tls_material "$dir/tls" || return 1
  # Token authentication: a throwaway HS256 key and one token signed with it (RFC 7519).
  local token_key token
  read -r token_key token < <(python3 - <<'PY'
import base64, hashlib, hmac, json, secrets
key = secrets.token_bytes(32)
def b64(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
head = b64(json.dumps({"alg": "HS256"}).encode())
body = b64(json.dumps({"sub": "bq-client"}).encode())
sig = b64(hmac.new(key, f"{head}.{body}".encode(), hashlib.sha256).digest())
print(base64.b64encode(key).decode(), f"{head}.{body}.{sig}")
PY
  )
  echo "$token" >"$dir/token"
  cp "$repo/scripts/pulsar/log4j2.properties" "$dir/log4j2.properties"
  {
    cat "$repo/scripts/pulsar/standalone.conf"
    cat <<EOF2

# -- this run (written by scripts/services.sh) ---------------------------------------
brokerServicePort=$broker
webServicePort=$web
brokerServicePortTls=$tls
tlsCertificateFilePath=$dir/tls/server.pem
# a PKCS#8 PEM key, as Pulsar's TLS documentation asks (OpenSSL 3's \`req -newkey\` writes one)
tlsKeyFilePath=$dir/tls/server.key
tlsTrustCertsFilePath=$dir/tls/ca.pem
tlsAllowInsecureConnection=false
# the bookie's interface (bookie port: --bookkeeper-port $bookie)
listeningInterface=$lo
# token authentication for the security tests; anonymous clients keep working (no token
# given: role anonymous, and authorization is off)
authenticationEnabled=true
authenticationProviders=org.apache.pulsar.broker.authentication.AuthenticationProviderToken
tokenSecretKey=data:;base64,$token_key
anonymousUserRole=anonymous
authorizationEnabled=false
EOF2
  } >"$dir/standalone.conf"
  # The control script of BABELQUEUE_PULSAR_CTL (tests stop and restart the broker with it).
  ctl_script pulsar "$dir"

  t0=$EPOCHREALTIME
  pulsar_launch "$dir"
  ready_poll=0.5 wait_ready "$ready_timeout" pulsar_ready "$dir" "$dir/pulsar.log" \
    "$dir/probe.log" || return 1
  {
    env_line BABELQUEUE_PULSAR_URL "pulsar://127.0.0.1:$broker"
    env_line BABELQUEUE_PULSAR_TLS_URL "pulsar+ssl://localhost:$tls"
    env_line BABELQUEUE_PULSAR_TLS_CA "$dir/tls/ca.pem"
    env_line BABELQUEUE_PULSAR_TOKEN "$(cat "$dir/token")"
    env_line BABELQUEUE_PULSAR_ADMIN_URL "http://127.0.0.1:$web"
    env_line BABELQUEUE_PULSAR_LIBS "$pulsar_libs"
    env_line BABELQUEUE_PULSAR_CTL "$dir/pulsarctl"
  } >"$dir/env"
  say "pulsar ready in" \
    "$(elapsed "$t0") s:" \
    "broker 127.0.0.1:$broker, tls $tls, web $web, bookie $bookie ($(cat "$dir/probe.out"))"
}

pulsar_alive() {
  [[ -f $1/ports ]] && pulsar_ready "$1" 2>/dev/null
}

# Run by broker_ctl once a started standalone is ready (start, restart, kill-restart).
# Pulsar's standalone, started on the data of one that was SIGKILLed, sometimes finds its
# bookie's stale registration (/ledgers/available/<bookie>) and loops for good deleting and
# re-creating it (ResourceLockImpl: "Lock on resource ... was invalidated", then "Successfully
# re-acquired lock", over and over): 55-70 % of a core and hundreds of MB of log per hour,
# taken from every later build and test phase. Seen with 4.0.0 and with 4.0.1, which has
# apache/pulsar#23497 (the standalone's deletion of a stale registration) and still looped
# after 5 of 15 kill+start cycles (4,000-4,900 such lines and 11-14 MB of log in the first
# 30 s). The loop shows within a second of the registration, before the broker answers; a
# graceful restart ends it (that stop removes the registration), data kept.
pulsar_helpers_start() {
  local dir=$1 try
  for try in 1 2 3; do
    sleep 2
    (($(log_since "$dir/pulsar.log" "$dir/log-offset" |
      grep -c 'Lock on resource /ledgers/available/.* was invalidated') < 5)) && return 0
    say "pulsar: the standalone's bookie-registration loop after a SIGKILL;" \
      "restarting it gracefully ($try)"
    echo "[$(date '+%F %T')] services.sh: bookie-registration loop; graceful restart" \
      >>"$dir/pulsar.log"
    pulsar_stop "$dir"
    pulsar_launch "$dir"
    ready_poll=0.5 wait_ready "$ready_timeout" pulsar_ready "$dir" "$dir/pulsar.log" \
      "$dir/probe.log" || return 1
  done
  die "the Pulsar standalone in $dir still loops on its bookie registration"
}

# SIGTERM: the standalone closes the broker (unloading its topics), then the bookie and the
# metadata store; about 7 s.
pulsar_stop() { stop_pid "$1/pulsar.pid" "$pulsar_class" 30 group; }

# BABELQUEUE_PULSAR_CTL, on the standalone of this run directory (control.sh's actions).
ctl_register pulsar Pulsar "$pulsar_class" "Pulsar standalone"
