# shellcheck shell=bash
# The artemis service of scripts/services.sh (sourced by it; the Azure Service Bus stand-in
# on the same broker is asb.sh). Exports:
#   artemis   BABELQUEUE_ARTEMIS_URL       artemis://admin:admin@127.0.0.1:<port> (Apache ActiveMQ
#                                          Artemis 2.40.0, AMQP 1.0 acceptor; login: SASL PLAIN
#                                          admin/admin, or ANONYMOUS (role guest: send, consume,
#                                          browse, create addresses and queues; no management);
#                                          a wrong password is refused). Address
#                                          settings: `#` defaults to ANYCAST routing (a bare
#                                          link to a fresh address makes a queue), `multicast.#`
#                                          keeps Artemis's stock MULTICAST defaults
#             BABELQUEUE_ARTEMIS_TLS_URL   artemis+ssl://admin:admin@localhost:<port> (AMQP 1.0
#                                          over TLS on 127.0.0.1; server certificate DNS:localhost
#                                          and IP:127.0.0.1 signed by the CA below; no client
#                                          certificate required)
#             BABELQUEUE_ARTEMIS_TLS_CA    PEM of the throwaway CA that signed both certificates
#             BABELQUEUE_ARTEMIS_TLS_CERT  client certificate PEM (the broker does not ask for it)
#             BABELQUEUE_ARTEMIS_TLS_KEY   client private key PEM
#             BABELQUEUE_ARTEMIS_CORE_URL  tcp://127.0.0.1:<port>, the all-protocols acceptor
#                                          (for the artemis CLI: --url ... --user admin
#                                          --password admin)
#             BABELQUEUE_ARTEMIS_HOME      the broker instance directory (bin/artemis, etc/, data/)
#             BABELQUEUE_ARTEMIS_CTL       "$BABELQUEUE_ARTEMIS_CTL" stop | kill | start | restart |
#                                          kill-restart | pid like the Kafka one (persistence on:
#                                          durable messages survive a restart), and
#                                          queue-stat [ARGS] = `artemis queue stat` against it;
#                                          start, restart and kill-restart also start the CBS
#                                          responder below once the broker is ready (a running
#                                          one is kept), stop and kill stop it
#             (and the stand-in's BABELQUEUE_ASB_CONNECTION_STRING and BABELQUEUE_ASB_CBS_LOG,
#             see asb.sh)
#
# Apache ActiveMQ Artemis 2.40.0, for the AMQP 1.0 transport. The binary distribution
# (org.apache.activemq:apache-artemis:2.40.0:tar.gz:bin from Maven Central, 47 MB) is
# downloaded and unpacked once into ${BABELQUEUE_CACHE_DIR:-~/.cache/babelqueue}/artemis-2.40.0
# (cache_fill). Each start makes a fresh broker instance in the run directory (`artemis
# create`, about 3 s) and adapts it with scripts/artemis/configure.py: one JVM (-Xms64M
# -Xmx512M), acceptors on free loopback ports only: `artemis` (all protocols; for the CLI),
# `amqp`, and `amqps` (TLS, PKCS12 keystore of tls_material's server certificate); address
# settings `#` with ANYCAST routing defaults and `multicast.#` with the stock MULTICAST ones;
# logins admin/admin or SASL ANONYMOUS (role guest), a wrong password refused; the address
# `$cbs` and the amqp acceptor's anycastPrefix for the Azure Service Bus stand-in (below).
# Persistence stays on (journal without fsync), so durable messages survive a restart.
artemis_version=2.40.0
artemis_dist=  # set by artemis_fetch
artemis_class='org\.apache\.activemq\.artemis\.boot\.Artemis'
# The variables bin/artemis and its profiles would take from the caller instead of the
# instance's settings (e.g. JAVA_ARGS replaces the heap settings).
artemis_env=(env -u JAVA_ARGS -u JAVA_ARGS_APPEND -u DEBUG_ARGS -u LOGGING_ARGS
  -u ARTEMIS_INSTANCE -u ARTEMIS_HOME -u ARTEMIS_CLUSTER_PROPS)

# artemis_fetch: sets artemis_dist to the unpacked distribution, downloading it first when
# needed.
artemis_fetch() {
  local cache=$cache_root/artemis-$artemis_version
  artemis_dist=$cache/apache-artemis-$artemis_version
  cache_fill "$cache" "apache-artemis-$artemis_version/bin/artemis" artemis mvn artemis_download
}

# artemis_download: the distribution, unpacked into ./apache-artemis-<version> (cache_fill's
# FETCH); the tarball is deleted (Maven's local repository keeps a copy).
artemis_download() {
  local v=$artemis_version tarball=apache-artemis-$artemis_version-bin.tar.gz size
  rm -rf "apache-artemis-$v" "$tarball"
  mvn_quiet dependency:copy "-Dartifact=org.apache.activemq:apache-artemis:$v:tar.gz:bin" \
    -DoutputDirectory=. || return 1
  size=$(du -h "$tarball" | cut -f1) || return 1
  tar xzf "$tarball" || return 1
  rm -f "$tarball"
  echo "apache-artemis-$v-bin.tar.gz $size, unpacked $(du -sh "apache-artemis-$v" | cut -f1)"
}

# artemis_launch DIR: starts the broker instance of DIR (made by artemis_start).
artemis_launch() {
  local dir=$1 dist
  dist=$(cat "$dir/dist")
  [[ -f $dist/../complete ]] || die "the Artemis distribution $dist is gone (start artemis anew)"
  echo "[$(date '+%F %T')] services.sh: starting the broker" >>"$dir/artemis.log"
  # artemis_ready reads the log from here on (a restarted broker appends to the old log)
  log_mark "$dir/artemis.log" "$dir/log-offset"
  : >"$dir/probe.log"
  launch "$dir/artemis.pid" "$dir/artemis.log" -- \
    "${artemis_env[@]}" "$dir/instance/bin/artemis" run
}

# artemis_probe DIR PORT [--tls CA]: an AMQP 1.0 round trip as admin
# (scripts/artemis/amqp-probe.py); its complaint goes to DIR/probe.log.
artemis_probe() {
  local dir=$1 port=$2
  shift 2
  python3 "$repo/scripts/artemis/amqp-probe.py" 127.0.0.1 "$port" admin admin "$@" \
    2>>"$dir/probe.log" </dev/null 9>&-
}

# artemis_ready DIR: the broker logged AMQ221007 (server active) since its launch and an AMQP
# round trip works on the amqp and on the amqps acceptor (verifying the server certificate
# against the CA, for the name localhost); 2 when its process is gone or a port was taken.
artemis_ready() {
  local dir=$1 core amqp tls since
  launched "$dir/artemis.pid" "$artemis_class" "the Artemis broker" || return
  read -r core amqp tls <"$dir/ports"
  since=$(log_since "$dir/artemis.log" "$dir/log-offset")
  if grep -q 'Address already in use' <<<"$since"; then
    echo "services: ERROR: one of the Artemis ports ($core $amqp $tls) is taken" >&2
    return 2
  fi
  grep -q AMQ221007 <<<"$since" || return 1
  artemis_probe "$dir" "$amqp" && artemis_probe "$dir" "$tls" --tls "$dir/tls/ca.pem"
}

artemis_start() {
  local dir=$1 core amqp tls pass t created f
  for f in java openssl; do
    command -v "$f" >/dev/null || die "$f not found (scripts/apt-packages.txt)"
  done
  artemis_fetch || return 1
  cbs_python "$dir" || return 1
  read -r core amqp tls < <(free_ports 3)
  echo "$core $amqp $tls" >"$dir/ports"
  echo "$artemis_dist" >"$dir/dist"
  mkdir -p "$dir/tls"
  pass=$(openssl rand -hex 16)
  tls_material "$dir/tls" "$pass" || return 1
  t=$SECONDS
  # --default-port: the `artemis` acceptor's port; configure.py moves and adds the others.
  if ! "${artemis_env[@]}" "$artemis_dist/bin/artemis" create "$dir/instance" --silent --force \
      --user admin --password admin --require-login --host 127.0.0.1 --default-port "$core" \
      --no-web --no-autotune --no-fsync --java-memory 512M \
      --no-stomp-acceptor --no-mqtt-acceptor --no-hornetq-acceptor \
      >"$dir/create.log" 2>&1 </dev/null 9>&- ||
    ! python3 "$repo/scripts/artemis/configure.py" "$dir/instance" "$core" "$amqp" "$tls" \
      "$dir/tls/server.p12" "$pass" >>"$dir/create.log" 2>&1; then
    echo "services: ERROR: creating the Artemis instance failed:" >&2
    cat "$dir/create.log" >&2
    return 1
  fi
  created=$((SECONDS - t))
  # The control script of BABELQUEUE_ARTEMIS_CTL.
  ctl_script artemis "$dir"

  artemis_launch "$dir"
  wait_ready "$ready_timeout" artemis_ready "$dir" "$dir/artemis.log" "$dir/probe.log" ||
    return 1
  local broker=$((SECONDS - t))
  cbs_start "$dir" || return 1
  {
    env_line BABELQUEUE_ARTEMIS_URL "artemis://admin:admin@127.0.0.1:$amqp"
    env_line BABELQUEUE_ARTEMIS_TLS_URL "artemis+ssl://admin:admin@localhost:$tls"
    env_line BABELQUEUE_ARTEMIS_TLS_CA "$dir/tls/ca.pem"
    env_line BABELQUEUE_ARTEMIS_TLS_CERT "$dir/tls/client.pem"
    env_line BABELQUEUE_ARTEMIS_TLS_KEY "$dir/tls/client.key"
    env_line BABELQUEUE_ARTEMIS_CORE_URL "tcp://127.0.0.1:$core"
    env_line BABELQUEUE_ARTEMIS_HOME "$dir/instance"
    env_line BABELQUEUE_ARTEMIS_CTL "$dir/artemisctl"
    env_line BABELQUEUE_ASB_CONNECTION_STRING "Endpoint=sb://127.0.0.1:$amqp;SharedAccessKeyName=$asb_key_name;SharedAccessKey=$asb_key;UseDevelopmentEmulator=true;"
    env_line BABELQUEUE_ASB_CBS_LOG "$dir/cbs.log"
  } >"$dir/env"
  say "artemis ready in $((SECONDS - t)) s (instance created in $created s, broker ready at" \
    "$broker s, CBS responder in $(cat "$dir/cbs-ready-time") s): amqp 127.0.0.1:$amqp," \
    "amqps 127.0.0.1:$tls, core 127.0.0.1:$core"
}

artemis_alive() {
  [[ -f $1/ports ]] && artemis_ready "$1" 2>/dev/null && cbs_alive "$1"
}

artemis_stop() {
  cbs_stop "$1"
  stop_pid "$1/artemis.pid" "$artemis_class" 30 group
}

# control.sh's hooks: the CBS responder is started once the broker is ready (a running one is
# kept) and stopped with the broker (artemis_stop) or right after a SIGKILL of it.
artemis_helpers_start() {
  if cbs_alive "$1"; then
    say "CBS responder already running"
  else
    cbs_start "$1" || return 1
    say "CBS responder ready in $(cat "$1/cbs-ready-time") s"
  fi
}
artemis_helpers_stop() { cbs_stop "$1"; }

# BABELQUEUE_ARTEMIS_CTL, on the broker of this run directory: control.sh's actions, and
# queue-stat [ARGS] (`artemis queue stat` as admin, ARGS e.g. --queueName NAME or --json).
artemis_queue_stat() {
  local dir=$1 core
  shift
  read -r core _ <"$dir/ports"
  # (without the CLI's "Connection brokerURL = ..." line)
  "${artemis_env[@]}" "$dir/instance/bin/artemis" queue stat --silent \
    --url "tcp://127.0.0.1:$core" --user admin --password admin "$@" </dev/null 9>&- |
    sed '/^Connection brokerURL = /d'
}
ctl_register artemis Artemis "$artemis_class" "Artemis broker"
ctl_extra artemis queue-stat 'queue-stat [ARGS]' artemis_queue_stat
