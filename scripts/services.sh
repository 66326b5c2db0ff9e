#!/usr/bin/env bash
# The one place real test servers are started (scripts/test.sh, CI, developers):
#
#   bash scripts/services.sh start NAME...    start services (rabbitmq, redis, redis-cluster,
#                                             kafka, artemis,
#                                             sqs, pulsar, postgres); one already running from
#                                             this run dir is kept
#   bash scripts/services.sh stop [NAME...]   stop them (default: every service of the run dir)
#   bash scripts/services.sh env              print the export lines (= services.env)
#   bash scripts/services.sh kafka-ctl ACTION what $BABELQUEUE_KAFKA_CTL runs (see below)
#   bash scripts/services.sh artemis-ctl ACTION  what $BABELQUEUE_ARTEMIS_CTL runs
#   bash scripts/services.sh sqs-ctl ACTION   what $BABELQUEUE_SQS_CTL runs
#   bash scripts/services.sh pulsar-ctl ACTION  what $BABELQUEUE_PULSAR_CTL runs
#   bash scripts/services.sh postgres-ctl ACTION  what $BABELQUEUE_POSTGRES_CTL runs
#
# State lives in one run directory, $BABELQUEUE_SERVICES_DIR (default <repo>/build/services):
#   services.env       `export VAR=value` lines of every started service: `source` it
#   <name>/            that service's config, data, logs, pid files and env fragment (env)
# Every server listens on 127.0.0.1 only, on ports that were free at start, and is stopped
# by the PIDs recorded here, never by process name (CI is a shared machine).
#
# Exports:
#   rabbitmq  BABELQUEUE_RABBITMQ_URL      amqp://guest:guest@127.0.0.1:<port>/%2F
#             BABELQUEUE_RABBITMQ_TLS_URL  amqps://guest:guest@localhost:<port>/%2F (listening on
#                                          127.0.0.1). Host `localhost`: rabbitmq-c 0.11 checks
#                                          the host name against DNS names only, never an IP
#                                          SAN. The listener REQUIRES a client certificate
#                                          (verify_peer, fail_if_no_peer_cert) signed by the CA;
#                                          the server certificate names DNS:localhost and
#                                          IP:127.0.0.1
#             BABELQUEUE_RABBITMQ_TLS_CA   PEM of the throwaway CA that signed both certificates
#             BABELQUEUE_RABBITMQ_TLS_CERT client certificate PEM
#             BABELQUEUE_RABBITMQ_TLS_KEY  client private key PEM
#             BABELQUEUE_RABBITMQ_CTL      rabbitmqctl bound to this node, e.g.
#                                          "$BABELQUEUE_RABBITMQ_CTL" stop_app / start_app /
#                                          close_all_connections why / list_queues name messages
#   redis     BABELQUEUE_REDIS_URL         redis://127.0.0.1:<port>
#   redis-cluster BABELQUEUE_REDIS_CLUSTER_URL  redis://127.0.0.1:<p1>,127.0.0.1:<p2>,127.0.0.1:<p3>
#                                          ?cluster=1: a Redis Cluster of three primaries (no
#                                          replicas; slots split evenly by redis-cli --cluster
#                                          create), each in its own directory, no persistence
#             BABELQUEUE_REDIS_CLUSTER_PORTS  "<p1> <p2> <p3>" (for redis-cli -c -p ...)
#   kafka     BABELQUEUE_KAFKA_URL         kafka://127.0.0.1:<port> (Apache Kafka 4.1.1, KRaft,
#                                          one node that is broker and controller)
#             BABELQUEUE_KAFKA_BOOTSTRAP   127.0.0.1:<port> (bootstrap.servers)
#             BABELQUEUE_KAFKA_LIBS        the broker's jar directory, with Kafka's tools:
#                                          java -cp "$BABELQUEUE_KAFKA_LIBS/*"
#                                          org.apache.kafka.tools.ProducerPerformance ...
#             BABELQUEUE_KAFKA_CTL         "$BABELQUEUE_KAFKA_CTL" stop | kill | start | restart |
#                                          kill-restart | pid: stop = SIGTERM and wait (SIGKILL
#                                          after 30 s), kill = SIGKILL and wait, start = the same
#                                          ports and data again, back once it is ready
#                                          (topics, records and committed offsets survive)
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
#             BABELQUEUE_ASB_CONNECTION_STRING  the Azure Service Bus stand-in on the same broker:
#                                          Endpoint=sb://127.0.0.1:<amqp port>;
#                                          SharedAccessKeyName=RootManageSharedAccessKey;
#                                          SharedAccessKey=<fixed test key, base64>;
#                                          UseDevelopmentEmulator=true; (plain AMQP on the amqp
#                                          port, SASL ANONYMOUS, then a CBS put-token on `$cbs`
#                                          answered by scripts/artemis/cbs-responder.py: 202 for
#                                          a SAS token signed with that key name and key, not
#                                          expired, whose sr covers the audience; 401 otherwise;
#                                          entity URLs amqps://127.0.0.1:<amqp port>/<queue>
#                                          are the queue <queue>). Not Service Bus: no PeekLock
#                                          lock tokens, no DeliveryCount (docs/testing.md)
#             BABELQUEUE_ASB_CBS_LOG       the responder's log: one JSON object per put-token
#                                          request (audience, key_name, sr, expiry, token,
#                                          status, verdict, reasons)
#   sqs       BABELQUEUE_SQS_ENDPOINT      http://127.0.0.1:<port> (ElasticMQ 1.7.1, an in-memory
#                                          Amazon SQS-compatible server; JSON (X-Amz-Target) and
#                                          query protocols; sqs-limits = strict: SQS queue name
#                                          rules (`orders.dlq` is refused), message bodies up to
#                                          1 MiB (SQS's current limit; 1,048,577 characters are
#                                          refused), 10-entry batches; region us-east-1, account
#                                          000000000000: QueueUrls are
#                                          http://127.0.0.1:<port>/000000000000/<queue>; any
#                                          credentials are accepted, signatures are not checked;
#                                          docs/testing.md lists the errors it answers)
#             BABELQUEUE_SQS_URL           sqs://us-east-1?endpoint=http://127.0.0.1:<port>
#             BABELQUEUE_SQS_CTL           "$BABELQUEUE_SQS_CTL" stop | kill | start | restart |
#                                          kill-restart | pid like the Kafka one, on the same
#                                          port, but in memory only: a restarted server has no
#                                          queues and no messages
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
#   postgres  BABELQUEUE_POSTGRES_URL      postgresql://babelqueue@127.0.0.1:<port>/babelqueue
#                                          (PostgreSQL 15, a private cluster: superuser
#                                          babelqueue, trust authentication on 127.0.0.1 and on
#                                          the unix socket in the run dir's postgres/, fsync off)
#             BABELQUEUE_POSTGRES_CTL      "$BABELQUEUE_POSTGRES_CTL" stop | kill | start | restart |
#                                          kill-restart | pid like the Kafka one (stop = fast
#                                          shutdown; committed rows survive each of them)
#
# Adding a service is three functions below,
# <name>_start DIR (start the server with `launch`, which records its PID, wait until a
# client round trip works, write DIR/env), <name>_alive DIR and <name>_stop DIR, plus its
# name in `known`.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
run=${BABELQUEUE_SERVICES_DIR:-$repo/build/services}
known=(rabbitmq redis redis-cluster kafka artemis sqs pulsar postgres)  # also the order of services.env
rabbitmq_bin=/usr/lib/rabbitmq/bin
ready_timeout=${BABELQUEUE_SERVICES_TIMEOUT:-90}

say() { echo "services: $*"; }
die() { echo "services: ERROR: $*" >&2; exit 1; }

# free_ports N: N distinct loopback TCP ports that are free right now.
free_ports() {
  python3 -c '
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

# alive_pid FILE PATTERN: prints the PID recorded in FILE when that process is alive and its
# command line matches PATTERN (guards against a recycled PID); fails otherwise.
alive_pid() {
  local pid cmd
  [[ -s "$1" ]] || return 1
  pid=$(head -n 1 "$1" 2>/dev/null | tr -dc 0-9)
  [[ -n "$pid" && -r /proc/$pid/cmdline ]] || return 1
  cmd=$(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null) || return 1
  [[ -n "$cmd" && "$cmd" =~ $2 ]] || return 1  # a zombie has an empty command line
  echo "$pid"
}

# stop_pid FILE PATTERN [SECONDS] [GROUP]: SIGTERM (to the process group when GROUP is set),
# wait up to SECONDS (default 10), then SIGKILL.
stop_pid() {
  local pid target i
  pid=$(alive_pid "$1" "$2") || return 0
  target=$pid
  [[ -n "${4:-}" ]] && target=-$pid
  kill -TERM -- "$target" 2>/dev/null || true
  for ((i = 0; i < ${3:-10} * 10; i++)); do
    alive_pid "$1" "$2" >/dev/null || return 0
    sleep 0.1
  done
  kill -KILL -- "$target" 2>/dev/null || true
}

# launch PIDFILE LOG [ENVFILE] -- COMMAND...: starts COMMAND in its own session (so that a
# Ctrl-C of the caller does not reach it; stop() ends it), in the PID file's directory, with
# ENVFILE's exports, appending to LOG (a restarted server keeps its earlier log); records its
# PID. The lock (fd 9) is not inherited: a server holding it would block every later
# services.sh.
launch() {
  local pidfile=$1 log=$2 envfile=
  shift 2
  [[ $1 != -- ]] && envfile=$1 && shift
  shift
  (
    if [[ -n $envfile ]]; then
      set -a
      . "$envfile"
      set +a
    fi
    cd "$(dirname "$pidfile")"
    exec setsid "$@"
  ) >>"$log" 2>&1 </dev/null 9>&- &
  echo $! >"$pidfile"
}

# env_line NAME VALUE: one `export` line, shell-quoted.
env_line() { printf 'export %s=%q\n' "$1" "$2"; }

write_env() {
  local out=$run/services.env name
  {
    echo "# written by scripts/services.sh; source it"
    for name in "${known[@]}"; do
      [[ -f "$run/$name/env" ]] && cat "$run/$name/env"
    done
  } >"$out.tmp"
  mv "$out.tmp" "$out"
}

# running PID: the process exists and is not a zombie.
running() {
  local state
  state=$(awk '{print $3}' /proc/"$1"/stat 2>/dev/null) && [[ -n $state && $state != Z ]]
}

# wait_ready SECONDS CHECK DIR LOG...: polls `CHECK DIR` until it succeeds (every $ready_poll
# seconds, default 1); gives up when it returns 2 (the server died) or after SECONDS, printing
# the tail of each LOG.
wait_ready() {
  local limit=$1 deadline=$((SECONDS + $1)) check=$2 dir=$3 rc log
  shift 3
  while :; do
    rc=0
    "$check" "$dir" || rc=$?
    ((rc == 0)) && return 0
    if ((rc == 2 || SECONDS >= deadline)); then
      ((rc == 2)) || echo "services: ERROR: not ready after $limit s" >&2
      for log in "$@"; do
        [[ -f $log ]] || continue
        echo "services: last lines of $log:" >&2
        tail -n 30 "$log" >&2 || true
      done
      return 1
    fi
    sleep "${ready_poll:-1}"
  done
}

# tls_material DIR [P12_PASSWORD]: throwaway CA (ca.pem), server (server.pem/.key: CN and SAN
# DNS:localhost, SAN IP:127.0.0.1) and client (client.pem/.key) certificates in DIR; with
# P12_PASSWORD also server.p12, the server key and certificate chain as a PKCS12 keystore (for
# Java servers).
tls_material() {
  local d=$1 p12=${2:-} name
  (
    cd "$d"
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=babelqueue test CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -keyout ca.key -out ca.pem
    printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "basicConstraints=CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" >server.ext
    printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=clientAuth" >client.ext
    for name in server client; do
      local cn=localhost
      [[ $name == client ]] && cn=babelqueue-test-client
      openssl req -newkey rsa:2048 -nodes -subj "/CN=$cn" -keyout "$name.key" -out "$name.csr"
      openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
        -extfile "$name.ext" -out "$name.pem"
    done
    if [[ -n $p12 ]]; then
      openssl pkcs12 -export -name server -in server.pem -inkey server.key -certfile ca.pem \
        -passout "pass:$p12" -out server.p12
    fi
    rm -f ./*.csr ./*.ext ca.srl
    chmod 600 ./*.key
  ) >"$d/openssl.log" 2>&1 || { cat "$d/openssl.log" >&2; return 1; }
}

# -- redis ------------------------------------------------------------------------------
redis_start() {
  local dir=$1 port
  command -v redis-server >/dev/null || die "redis-server not installed (apt-get install redis-server)"
  port=$(free_ports 1)
  echo "$port" >"$dir/port"
  redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no --daemonize yes \
    --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --dir "$dir" >/dev/null 9>&-
  wait_ready 15 redis_alive "$dir" "$dir/redis.log" || return 1
  env_line BABELQUEUE_REDIS_URL "redis://127.0.0.1:$port" >"$dir/env"
  say "redis ready on 127.0.0.1:$port"
}
redis_alive() {
  alive_pid "$1/redis.pid" redis-server >/dev/null &&
    [[ "$(redis-cli -h 127.0.0.1 -p "$(cat "$1/port")" ping 2>/dev/null)" == PONG ]]
}
redis_stop() { stop_pid "$1/redis.pid" redis-server 10; }

# -- redis-cluster ----------------------------------------------------------------------
# Three primaries on free loopback ports (DIR/node-<port>/ each: its nodes.conf, pid, log),
# joined by `redis-cli --cluster create`; ready once every node reports cluster_state:ok and
# agrees that all 16384 slots are assigned.
redis-cluster_start() {
  local dir=$1 port ports all bus addrs=() url= i
  command -v redis-server >/dev/null || die "redis-server not installed (apt-get install redis-server)"
  command -v redis-cli >/dev/null || die "redis-cli not installed (apt-get install redis-tools)"
  # Six ports: three for clients, three for the cluster bus (given explicitly: the default,
  # port + 10000, may be taken or above 65535).
  read -ra all <<<"$(free_ports 6)"
  ports="${all[*]:0:3}"
  echo "$ports" >"$dir/ports"
  for i in 0 1 2; do
    port=${all[$i]} bus=${all[$((i + 3))]}
    mkdir -p "$dir/node-$port"
    redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no --daemonize yes \
      --cluster-enabled yes --cluster-port "$bus" --cluster-config-file "$dir/node-$port/nodes.conf" \
      --cluster-node-timeout 5000 --pidfile "$dir/node-$port/redis.pid" \
      --logfile "$dir/node-$port/redis.log" --dir "$dir/node-$port" >/dev/null 9>&-
    addrs+=("127.0.0.1:$port")
    url+="${url:+,}127.0.0.1:$port"
  done
  ready_poll=0.2 wait_ready 15 redis-cluster_nodes_up "$dir" "$dir"/node-*/redis.log || return 1
  redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes \
    >"$dir/create.log" 2>&1 9>&- || { cat "$dir/create.log" >&2; return 1; }
  ready_poll=0.2 wait_ready 30 redis-cluster_alive "$dir" "$dir"/node-*/redis.log || return 1
  {
    env_line BABELQUEUE_REDIS_CLUSTER_URL "redis://$url?cluster=1"
    env_line BABELQUEUE_REDIS_CLUSTER_PORTS "$ports"
  } >"$dir/env"
  say "redis-cluster ready on 127.0.0.1 ports $ports"
}
redis-cluster_nodes_up() {
  local port
  for port in $(cat "$1/ports"); do
    alive_pid "$1/node-$port/redis.pid" redis-server >/dev/null || return 1
    [[ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" == PONG ]] || return 1
  done
}
redis-cluster_alive() {
  local port info
  [[ -s "$1/ports" ]] || return 1
  redis-cluster_nodes_up "$1" || return 1
  for port in $(cat "$1/ports"); do
    info=$(redis-cli -h 127.0.0.1 -p "$port" cluster info 2>/dev/null | tr -d '\r')
    [[ $info == *cluster_state:ok* && $info == *cluster_slots_assigned:16384* ]] || return 1
  done
}
redis-cluster_stop() {
  local node
  for node in "$1"/node-*; do
    [[ -d $node ]] && stop_pid "$node/redis.pid" redis-server 10
  done
  return 0
}

# -- postgres ---------------------------------------------------------------------------
# PostgreSQL 15 (Debian postgresql-15): a private cluster (initdb) in DIR/data, run as user
# postgres when we are root (initdb and postgres refuse root; nobody when there is no
# postgres user), as ourselves otherwise. 127.0.0.1 on a free port, its unix socket in DIR,
# trust authentication (loopback only), superuser babelqueue, database babelqueue; fsync and
# full_page_writes off: fast, and a crash of the machine loses the cluster (a crash of the
# server alone does not: commits are written to the kernel before they return, and the next
# start recovers from the WAL).
pg_bin=$(pg_config --bindir 2>/dev/null || true)
[[ -x $pg_bin/postgres ]] ||
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
pg_pattern='bin/postgres '
pg_user=
as_postgres=()
if ((EUID == 0)); then
  pg_user=postgres
  id -u postgres >/dev/null 2>&1 || pg_user=nobody
  as_postgres=(setpriv --reuid="$pg_user" --regid="$(id -g "$pg_user")" --init-groups)
fi

postgres_start() {
  local dir=$1 port t=$SECONDS
  [[ -x $pg_bin/initdb && -x $pg_bin/postgres ]] ||
    die "PostgreSQL server not installed (apt-get install postgresql-15 postgresql-client)"
  command -v psql >/dev/null || die "psql not found (apt-get install postgresql-client)"
  port=$(free_ports 1)
  echo "$port" >"$dir/ports"
  if ((EUID == 0)); then chown "$pg_user" "$dir"; fi
  if ! "${as_postgres[@]}" "$pg_bin/initdb" -D "$dir/data" -U babelqueue --auth=trust \
      --no-sync -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 </dev/null 9>&-; then
    echo "services: ERROR: initdb failed:" >&2
    cat "$dir/initdb.log" >&2
    return 1
  fi
  cat >>"$dir/data/postgresql.conf" <<PGCONF
# written by scripts/services.sh
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
fsync = off
full_page_writes = off
max_connections = 100
PGCONF
  # The control script of BABELQUEUE_POSTGRES_CTL (tests stop and restart the server with it).
  {
    echo '#!/usr/bin/env bash'
    echo "# stop | kill | start | restart | kill-restart | pid: the babelqueue test PostgreSQL"
    echo "# server of $dir (written by scripts/services.sh; see its header)."
    printf 'BABELQUEUE_SERVICES_DIR=%q exec bash %q postgres-ctl "$@"\n' \
      "$run" "$repo/scripts/services.sh"
  } >"$dir/postgresctl"
  chmod 755 "$dir/postgresctl"
  postgres_launch "$dir"
  ready_poll=0.2 wait_ready 60 postgres_server_ready "$dir" "$dir/postgres.log" || return 1
  if ! psql -X -q -h 127.0.0.1 -p "$port" -U babelqueue -d postgres \
      -c 'CREATE DATABASE babelqueue' >>"$dir/initdb.log" 2>&1 </dev/null; then
    echo "services: ERROR: CREATE DATABASE babelqueue failed" >&2
    return 1
  fi
  {
    env_line BABELQUEUE_POSTGRES_URL "postgresql://babelqueue@127.0.0.1:$port/babelqueue"
    env_line BABELQUEUE_POSTGRES_CTL "$dir/postgresctl"
  } >"$dir/env"
  say "postgres ready in $((SECONDS - t)) s: 127.0.0.1:$port, database babelqueue"
}

postgres_launch() {
  launch "$1/postgres.pid" "$1/postgres.log" -- "${as_postgres[@]}" "$pg_bin/postgres" -D "$1/data"
}

# The server answers a query (returns 2 when its process is gone).
postgres_server_ready() {
  local dir=$1
  running "$(cat "$dir/postgres.pid")" ||
    { echo "services: ERROR: postgres exited" >&2; return 2; }
  psql -X -qAt -h 127.0.0.1 -p "$(cat "$dir/ports")" -U babelqueue -d postgres \
    -c 'select 1' >/dev/null 2>&1 </dev/null || return 1  # (psql's 2 = no connection)
}
postgres_ready() {
  psql -X -qAt -h 127.0.0.1 -p "$(cat "$1/ports")" -U babelqueue -d babelqueue \
    -c 'select 1' >/dev/null 2>&1 </dev/null || return 1  # (psql's 2 = no connection)
}
postgres_alive() {
  [[ -f $1/ports ]] && alive_pid "$1/postgres.pid" "$pg_pattern" >/dev/null && postgres_ready "$1"
}
# SIGINT is PostgreSQL's fast shutdown (SIGTERM, a smart shutdown, would wait for every
# client to disconnect); SIGKILL to the process group after 30 s.
postgres_stop() {
  local dir=$1 pid i
  pid=$(alive_pid "$dir/postgres.pid" "$pg_pattern") || return 0
  kill -INT "$pid" 2>/dev/null || true
  for ((i = 0; i < 300; i++)); do
    alive_pid "$dir/postgres.pid" "$pg_pattern" >/dev/null || return 0
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
}

# After a SIGKILL (kill, kill-restart): wait until the killed postmaster is reaped too. Its
# zombie still answers kill(pid, 0), and a postmaster started meanwhile would take the
# stale postmaster.pid for a live server and refuse to start.
postgres_helpers_stop() {
  local pid i
  pid=$(head -n 1 "$1/postgres.pid" 2>/dev/null | tr -dc 0-9)
  [[ -n $pid ]] || return 0
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
}

# postgres_ctl ACTION: BABELQUEUE_POSTGRES_CTL, on the server of this run directory
# (broker_ctl's actions; kill = SIGKILL to the postmaster and its backends, and the next
# start runs crash recovery: committed rows survive).
postgres_ctl() {
  local rc=0
  broker_ctl postgres PostgreSQL "$pg_pattern" "$@" || rc=$?
  ((rc != 3)) ||
    die "usage: \$BABELQUEUE_POSTGRES_CTL stop | kill | start | restart | kill-restart | pid"
  return "$rc"
}

# -- rabbitmq ---------------------------------------------------------------------------
# A private node (own node name, ports, epmd, Erlang cookie, data) run as user rabbitmq when
# we are root (the server refuses to run as root), as ourselves otherwise.
as_rabbitmq=()
if ((EUID == 0)); then
  as_rabbitmq=(setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups)
fi

rabbitmq_start() {
  local dir=$1 amqp tls dist epmd node cookie f
  [[ -x $rabbitmq_bin/rabbitmq-server ]] ||
    die "rabbitmq-server not installed (apt-get install rabbitmq-server amqp-tools)"
  for f in epmd openssl amqp-declare-queue amqp-delete-queue; do
    command -v "$f" >/dev/null || die "$f not found (scripts/apt-packages.txt)"
  done
  read -r amqp tls dist epmd < <(free_ports 4)
  node=bq-$amqp@localhost
  mkdir -p "$dir"/{home,mnesia,log,tls}
  tls_material "$dir/tls"
  echo '[].' >"$dir/enabled_plugins"
  : >"$dir/rabbitmq-env.conf"  # instead of /etc/rabbitmq/rabbitmq-env.conf
  cat >"$dir/rabbitmq.conf" <<EOF
listeners.tcp.default = 127.0.0.1:$amqp
listeners.ssl.default = 127.0.0.1:$tls
ssl_options.cacertfile = $dir/tls/ca.pem
ssl_options.certfile = $dir/tls/server.pem
ssl_options.keyfile = $dir/tls/server.key
ssl_options.verify = verify_peer
ssl_options.fail_if_no_peer_cert = true
log.file.level = info
EOF
  # The environment of the node and of every rabbitmqctl call against it.
  {
    env_line HOME "$dir/home"
    env_line ERL_EPMD_PORT "$epmd"
    env_line ERL_EPMD_ADDRESS 127.0.0.1
    env_line ERL_CRASH_DUMP "$dir/log/erl_crash.dump"
    env_line RABBITMQ_NODENAME "$node"
    env_line RABBITMQ_NODE_IP_ADDRESS 127.0.0.1
    env_line RABBITMQ_NODE_PORT "$amqp"
    env_line RABBITMQ_DIST_PORT "$dist"
    env_line RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS "-kernel inet_dist_use_interface {127,0,0,1}"
    env_line RABBITMQ_MNESIA_BASE "$dir/mnesia"
    env_line RABBITMQ_LOG_BASE "$dir/log"
    env_line RABBITMQ_PID_FILE "$dir/rabbitmq.pid"
    env_line RABBITMQ_FEATURE_FLAGS_FILE "$dir/feature_flags"
    env_line RABBITMQ_ENABLED_PLUGINS_FILE "$dir/enabled_plugins"
    env_line RABBITMQ_CONFIG_FILE "$dir/rabbitmq.conf"
    env_line RABBITMQ_CONF_ENV_FILE "$dir/rabbitmq-env.conf"
  } >"$dir/node.env"
  printf '%s %s %s %s %s\n' "$node" "$amqp" "$tls" "$dist" "$epmd" >"$dir/ports"
  cookie=$(openssl rand -hex 20)
  printf '%s' "$cookie" >"$dir/home/.erlang.cookie"
  chmod 400 "$dir/home/.erlang.cookie"
  # rabbitmqctl bound to this node (tests restart the broker through it).
  cat >"$dir/rabbitmqctl" <<EOF
#!/bin/sh
# rabbitmqctl against the babelqueue test node $node (written by scripts/services.sh).
set -a
. "$dir/node.env"
set +a
exec ${as_rabbitmq[*]} $rabbitmq_bin/rabbitmqctl -n "$node" "\$@"
EOF
  chmod 755 "$dir/rabbitmqctl"
  ((EUID == 0)) && chown -R rabbitmq:rabbitmq "$dir"

  # Our own epmd on our own port (so its PID is ours to stop, and no other node shares it);
  # the node finds it through ERL_EPMD_PORT and does not spawn one.
  launch "$dir/epmd.pid" "$dir/log/epmd.log" -- \
    "${as_rabbitmq[@]}" epmd -port "$epmd" -address 127.0.0.1
  launch "$dir/launcher.pid" "$dir/log/console.log" "$dir/node.env" -- \
    "${as_rabbitmq[@]}" "$rabbitmq_bin/rabbitmq-server"

  {
    env_line BABELQUEUE_RABBITMQ_URL "amqp://guest:guest@127.0.0.1:$amqp/%2F"
    env_line BABELQUEUE_RABBITMQ_TLS_URL "amqps://guest:guest@localhost:$tls/%2F"
    env_line BABELQUEUE_RABBITMQ_TLS_CA "$dir/tls/ca.pem"
    env_line BABELQUEUE_RABBITMQ_TLS_CERT "$dir/tls/client.pem"
    env_line BABELQUEUE_RABBITMQ_TLS_KEY "$dir/tls/client.key"
    env_line BABELQUEUE_RABBITMQ_CTL "$dir/rabbitmqctl"
  } >"$dir/env.pending"
  # Ready: AMQP and AMQPS round trips work and the node says it has booted (await_startup;
  # each rabbitmqctl call costs seconds, so it is asked once the ports answer).
  local t=$SECONDS logs=("$dir/log/console.log" "$dir/log/$node.log")
  wait_ready "$ready_timeout" rabbitmq_amqp_ok "$dir" "${logs[@]}" || return 1
  local left=$((ready_timeout - (SECONDS - t)))
  ((left >= 20)) || left=20
  if ! timeout "$left" "$dir/rabbitmqctl" await_startup \
      >"$dir/log/await_startup.log" 2>&1; then
    echo "services: ERROR: rabbitmqctl await_startup failed:" >&2
    cat "$dir/log/await_startup.log" >&2
    return 1
  fi
  mv "$dir/env.pending" "$dir/env"
  say "rabbitmq ready in $((SECONDS - t)) s: node $node, amqp 127.0.0.1:$amqp, amqps 127.0.0.1:$tls"
}

# A queue can be declared over AMQP and deleted over AMQPS with the client certificate
# (returns 2 when the server process is gone).
rabbitmq_amqp_ok() {
  local dir=$1 node amqp tls
  running "$(cat "$dir/launcher.pid")" ||
    { echo "services: ERROR: rabbitmq-server exited" >&2; return 2; }
  read -r node amqp tls _ <"$dir/ports"
  amqp-declare-queue --url="amqp://guest:guest@127.0.0.1:$amqp/%2F" -q bq-probe >/dev/null 2>&1 &&
    amqp-delete-queue --url="amqps://guest:guest@localhost:$tls/%2F" -q bq-probe \
      --cacert="$dir/tls/ca.pem" --cert="$dir/tls/client.pem" --key="$dir/tls/client.key" \
      >/dev/null 2>&1
}

rabbitmq_alive() {
  alive_pid "$1/rabbitmq.pid" beam >/dev/null && rabbitmq_amqp_ok "$1"
}

rabbitmq_stop() {
  local dir=$1 i
  if alive_pid "$dir/rabbitmq.pid" beam >/dev/null; then
    timeout 30 "$dir/rabbitmqctl" stop >/dev/null 2>&1 || true
    for ((i = 0; i < 150; i++)); do
      alive_pid "$dir/rabbitmq.pid" beam >/dev/null || break
      sleep 0.2
    done
  fi
  # Whatever is left (a node still booting, or one that did not stop): the launcher's
  # process group (setsid made it a group leader; the node runs in it), then the node itself.
  stop_pid "$dir/launcher.pid" rabbitmq-server 10 group
  stop_pid "$dir/rabbitmq.pid" beam 5
  stop_pid "$dir/epmd.pid" epmd 5
}

# -- downloads --------------------------------------------------------------------------
# Java servers (kafka, artemis, sqs, pulsar) come from Maven Central, and the CBS responder's
# python-qpid-proton (when the Python peer venv has none) from PyPI, downloaded once into a
# cache directory ${BABELQUEUE_CACHE_DIR:-~/.cache/babelqueue}/<service>-<key> shared by every
# run directory and reused while the key (what is downloaded) is unchanged.
cache_root=${BABELQUEUE_CACHE_DIR:-$HOME/.cache/babelqueue}
download_timeout=${BABELQUEUE_DOWNLOAD_TIMEOUT:-${BABELQUEUE_KAFKA_DOWNLOAD_TIMEOUT:-1200}}

# cache_fill CACHE NEEDS LABEL FETCH [TOOL]: makes sure the cache directory CACHE holds NEEDS
# (a path in it): unless the stamp file CACHE/complete and NEEDS exist, runs FETCH in CACHE,
# under CACHE/.lock (a second run directory waits for the first one's download instead of
# starting its own). FETCH prints a one-line summary, written into the stamp only after FETCH
# succeeded, so an interrupted download is redone. TOOL (default mvn) must be installed.
cache_fill() {
  local cache=$1 needs=$2 label=$3 fetch=$4 tool=${5:-mvn} rc=0
  [[ -f $cache/complete && -e $cache/$needs ]] && return 0
  if ! command -v "$tool" >/dev/null; then
    [[ $tool == mvn ]] && die "mvn not installed (scripts/apt-packages.txt: maven)"
    die "$tool not installed"
  fi
  mkdir -p "$cache"
  (
    flock -w "$download_timeout" 8 || die "another download holds $cache/.lock"
    [[ -f $cache/complete && -e $cache/$needs ]] && exit 0  # done by the holder of the lock
    rm -f "$cache/complete"
    say "$label: downloading into $cache (once)"
    t=$SECONDS
    cd "$cache"
    summary=$("$fetch") || exit 1
    [[ -e $needs ]] || die "$label: the download made no $cache/$needs"
    echo "$summary" >complete
    say "$label: downloaded in $((SECONDS - t)) s ($summary)"
  ) 8>"$cache/.lock" 9>&- || rc=$?
  return "$rc"
}

# mvn_quiet ARGS...: `mvn -B -q ARGS` in the current directory, bounded by the download
# timeout; its output goes to mvn.log, whose tail is printed when it fails.
mvn_quiet() {
  if ! timeout --foreground "$download_timeout" mvn -B -q "$@" >mvn.log 2>&1 </dev/null; then
    echo "services: ERROR: the Maven download failed; last lines of $PWD/mvn.log:" >&2
    tail -n 30 mvn.log >&2
    return 1
  fi
}

# mvn_libs POM JAR: the runtime jars of POM (scripts/<service>/pom.xml) into ./libs, for a
# cache_fill FETCH; JAR, a glob in libs/, must match afterwards. Prints the one-line summary.
mvn_libs() {
  rm -rf libs
  cp "$1" pom.xml
  mvn_quiet dependency:copy-dependencies -DoutputDirectory=libs -DincludeScope=runtime || return 1
  compgen -G "libs/$2" >/dev/null || die "no $2 in $PWD/libs"
  echo "$(ls libs | wc -l) jars, $(du -sh libs | cut -f1)"
}

# -- kafka ------------------------------------------------------------------------------
# Apache Kafka 4.1.1 as one KRaft node (process.roles=broker,controller) run straight from
# the Maven Central jars of scripts/kafka/pom.xml (no release tarball). The jars are
# downloaded once (mvn dependency:copy-dependencies, about 55 MB) into
# ${BABELQUEUE_CACHE_DIR:-~/.cache/babelqueue}/kafka-<hash of the pom>/libs and reused by every
# run while the pom is unchanged (cache_fill). The node itself (config, data, log) lives in
# the run directory and is formatted afresh at each start.
kafka_pom=$repo/scripts/kafka/pom.xml
kafka_libs=  # set by kafka_fetch

# kafka_fetch: sets kafka_libs to the jar directory, downloading it first when needed.
kafka_fetch() {
  local cache
  cache=$cache_root/kafka-$(sha256sum "$kafka_pom" | cut -c1-16)
  kafka_libs=$cache/libs
  cache_fill "$cache" libs kafka kafka_download
}

# kafka_download: the jars of the pom into ./libs (cache_fill's FETCH).
kafka_download() { mvn_libs "$kafka_pom" 'kafka_2.13-*.jar'; }

# kafka_launch DIR: starts the broker of DIR (configured by kafka_start) on its ports and data.
kafka_launch() {
  local dir=$1 libs
  libs=$(cat "$dir/libs")
  [[ -f $libs/../complete ]] || die "the Kafka jars in $libs are gone (start kafka anew)"
  echo "[$(date '+%F %T')] services.sh: starting the broker" >>"$dir/kafka.log"
  launch "$dir/kafka.pid" "$dir/kafka.log" -- \
    java -Xms256m -Xmx512m -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent \
    -Djava.awt.headless=true -Dlog4j2.configurationFile="$dir/log4j2.properties" \
    -cp "$libs/*" kafka.Kafka "$dir/server.properties"
}

# kafka_probe PORT: the broker answers: kcat lists broker 1 in its metadata (without kcat: a
# Kafka ApiVersions round trip, which a KRaft broker answers only once it is up and unfenced).
kafka_probe() {
  if command -v kcat >/dev/null; then
    kcat -b "127.0.0.1:$1" -L -m 3 2>/dev/null | grep -q "broker 1 at 127.0.0.1:$1"
  else
    python3 - "$1" <<'PY' 2>/dev/null
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
req = struct.pack(">hhih", 18, 0, 7, 8) + b"bq-probe"  # ApiVersions v0, correlation id 7
s.sendall(struct.pack(">i", len(req)) + req)
buf = b""
while len(buf) < 10:
    chunk = s.recv(4096)
    if not chunk:
        sys.exit(1)
    buf += chunk
corr, err = struct.unpack(">ih", buf[4:10])
sys.exit(0 if corr == 7 and err == 0 else 1)
PY
  fi
}

# kafka_ready DIR: the broker answers (2 when its process is gone).
kafka_ready() {
  local plain pid
  if ! alive_pid "$1/kafka.pid" 'kafka\.Kafka' >/dev/null; then
    # Just launched, the process may not have exec'd java yet (its command line is still
    # the launching shell's): only a process that is gone has exited.
    pid=$(head -n 1 "$1/kafka.pid" 2>/dev/null | tr -dc 0-9)
    [[ -n $pid ]] && running "$pid" && return 1
    echo "services: ERROR: the Kafka broker exited" >&2
    return 2
  fi
  read -r plain _ <"$1/ports"
  kafka_probe "$plain"
}

kafka_start() {
  local dir=$1 plain ctrl id t
  command -v java >/dev/null ||
    die "java not installed (scripts/apt-packages.txt: openjdk-17-jre-headless)"
  kafka_fetch || return 1
  read -r plain ctrl < <(free_ports 2)
  echo "$plain $ctrl" >"$dir/ports"
  echo "$kafka_libs" >"$dir/libs"
  mkdir -p "$dir/data"
  cp "$repo/scripts/kafka/log4j2.properties" "$dir/log4j2.properties"
  cat >"$dir/server.properties" <<EOF2
# written by scripts/services.sh: one KRaft node, broker and controller, on 127.0.0.1 only
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$ctrl
listeners=PLAINTEXT://127.0.0.1:$plain,CONTROLLER://127.0.0.1:$ctrl
advertised.listeners=PLAINTEXT://127.0.0.1:$plain
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
default.replication.factor=1
auto.create.topics.enable=true
group.initial.rebalance.delay.ms=0
offsets.topic.replication.factor=1
# one partition instead of 50: the first consumer group is ready in a fraction of the time
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
# message.max.bytes: 2 MiB, so a 1 MiB envelope (plus its headers) fits; tests check the too-large
# error with a larger record
message.max.bytes=2097152
EOF2
  # A new cluster id (a random UUID in Kafka's base64url form) and a formatted data directory.
  id=$(python3 -c '
import base64, os
while True:
    s = base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
    if not s.startswith("-"):
        print(s)
        break')
  t=$SECONDS
  if ! java -Xmx256m -Dlog4j2.configurationFile="$dir/log4j2.properties" \
      -cp "$kafka_libs/*" kafka.tools.StorageTool format -t "$id" \
      -c "$dir/server.properties" >"$dir/format.log" 2>&1 </dev/null 9>&-; then
    echo "services: ERROR: kafka-storage format failed:" >&2
    cat "$dir/format.log" >&2
    return 1
  fi
  # The control script of BABELQUEUE_KAFKA_CTL (tests stop and restart the broker with it).
  {
    echo '#!/usr/bin/env bash'
    echo "# stop | kill | start | restart | kill-restart | pid: the babelqueue test Kafka broker"
    echo "# of $dir (written by scripts/services.sh; see its header)."
    printf 'BABELQUEUE_SERVICES_DIR=%q exec bash %q kafka-ctl "$@"\n' \
      "$run" "$repo/scripts/services.sh"
  } >"$dir/kafkactl"
  chmod 755 "$dir/kafkactl"

  kafka_launch "$dir"
  wait_ready "$ready_timeout" kafka_ready "$dir" "$dir/kafka.log" || return 1
  {
    env_line BABELQUEUE_KAFKA_URL "kafka://127.0.0.1:$plain"
    env_line BABELQUEUE_KAFKA_BOOTSTRAP "127.0.0.1:$plain"
    env_line BABELQUEUE_KAFKA_LIBS "$kafka_libs"
    env_line BABELQUEUE_KAFKA_CTL "$dir/kafkactl"
  } >"$dir/env"
  say "kafka ready in $((SECONDS - t)) s (format included): 127.0.0.1:$plain, controller 127.0.0.1:$ctrl"
}

kafka_alive() {
  [[ -f $1/ports ]] && kafka_ready "$1" 2>/dev/null
}

kafka_stop() { stop_pid "$1/kafka.pid" 'kafka\.Kafka' 30 group; }

# kafka_ctl ACTION: BABELQUEUE_KAFKA_CTL, on the broker of this run directory. After a
# SIGKILL the new broker is ready only once the controller has let the killed incarnation's
# session expire (broker.session.timeout.ms, 9 s): kill-restart takes 16-21 s, restart 7-14
# (2 cores, idle to busy).
kafka_ctl() {
  local rc=0
  broker_ctl kafka Kafka 'kafka\.Kafka' "$@" || rc=$?
  ((rc != 3)) ||
    die "usage: \$BABELQUEUE_KAFKA_CTL stop | kill | start | restart | kill-restart | pid"
  return "$rc"
}

# -- artemis ----------------------------------------------------------------------------
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
  cache_fill "$cache" "apache-artemis-$artemis_version/bin/artemis" artemis artemis_download
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
  wc -c <"$dir/artemis.log" >"$dir/log-offset"
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
  local dir=$1 pid core amqp tls off since
  if ! alive_pid "$dir/artemis.pid" "$artemis_class" >/dev/null; then
    # just launched, bin/artemis may not have exec'd java yet
    pid=$(head -n 1 "$dir/artemis.pid" 2>/dev/null | tr -dc 0-9)
    [[ -n $pid ]] && running "$pid" && return 1
    echo "services: ERROR: the Artemis broker exited" >&2
    return 2
  fi
  read -r core amqp tls <"$dir/ports"
  off=$(cat "$dir/log-offset" 2>/dev/null) || off=0
  since=$(tail -c "+$((off + 1))" "$dir/artemis.log")
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
  {
    echo '#!/usr/bin/env bash'
    echo "# stop | kill | start | restart | kill-restart | pid | queue-stat [ARGS]: the babelqueue"
    echo "# test Artemis broker of $dir (written by scripts/services.sh; see its header)."
    printf 'BABELQUEUE_SERVICES_DIR=%q exec bash %q artemis-ctl "$@"\n' \
      "$run" "$repo/scripts/services.sh"
  } >"$dir/artemisctl"
  chmod 755 "$dir/artemisctl"

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

# broker_ctl's hooks: the CBS responder is started once the broker is ready (a running one is
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

# -- the Azure Service Bus stand-in (part of the artemis service) -------------------------
# No Service Bus emulator can be had here (Microsoft's is a container image). The stand-in:
# the artemis broker above takes SASL ANONYMOUS logins (etc/login.config, configure.py) and
# has a MULTICAST address `$cbs`, and scripts/artemis/cbs-responder.py (python-qpid-proton)
# answers the CBS put-token requests sent there, verifying each SAS token against the key
# below and logging it to DIR/cbs.log (BABELQUEUE_ASB_CBS_LOG). The real azure-servicebus SDK
# sends and receives (RECEIVE_AND_DELETE) through it; see docs/testing.md for what it is not.
asb_key_name=RootManageSharedAccessKey
asb_key='x4IkRxAcH6hTdcgljqGlVCxRFtmkMTGj/KoZtvd2iLs='  # a fixed test key (base64 of 32 bytes)
cbs_proton_version=0.40.0
cbs_pattern='cbs-responder\.py'

# cbs_python DIR: writes to DIR/cbs-python an interpreter that imports python-qpid-proton: the
# Python peer's ($BABELQUEUE_PEER_PYTHON, else the one build/peer-python.txt names) when it
# does, else a venv made once in ${BABELQUEUE_CACHE_DIR:-~/.cache/babelqueue}/cbs-venv-<version>
# (cache_fill: under its lock, redone when interrupted).
cbs_python() {
  local dir=$1 py=${BABELQUEUE_PEER_PYTHON:-} cache
  if [[ -z $py && -s $repo/build/peer-python.txt ]]; then
    py=$(head -n 1 "$repo/build/peer-python.txt")
  fi
  if [[ -z $py || ! -x $py ]] || ! "$py" -c 'import proton' >/dev/null 2>&1 </dev/null 9>&-; then
    cache=$cache_root/cbs-venv-$cbs_proton_version
    cache_fill "$cache" venv/bin/python cbs-responder cbs_venv_create python3 || return 1
    py=$cache/venv/bin/python
    "$py" -c 'import proton' >/dev/null 2>&1 </dev/null 9>&- ||
      die "$py does not import proton (delete $cache and start again)"
  fi
  echo "$py" >"$dir/cbs-python"
}

# cbs_venv_create: ./venv with python-qpid-proton from PyPI (cache_fill's FETCH).
cbs_venv_create() {
  rm -rf venv
  if ! { python3 -m venv venv || { rm -rf venv && /usr/bin/python3 -m venv venv; }; } \
      >pip.log 2>&1 </dev/null ||
    ! timeout --foreground "$download_timeout" venv/bin/pip install --quiet \
      --disable-pip-version-check --timeout 60 "python-qpid-proton==$cbs_proton_version" \
      >>pip.log 2>&1 </dev/null ||
    ! venv/bin/python -c 'import proton' >>pip.log 2>&1 </dev/null; then
    echo "services: ERROR: the python-qpid-proton venv failed; last lines of $PWD/pip.log:" >&2
    tail -n 30 pip.log >&2
    return 1
  fi
  echo "python-qpid-proton $cbs_proton_version, venv $(du -sh venv | cut -f1)"
}

# cbs_launch DIR: starts the responder against the amqp acceptor of DIR's broker.
cbs_launch() {
  local dir=$1 amqp
  read -r _ amqp _ <"$dir/ports"
  echo "[$(date '+%F %T')] services.sh: starting the CBS responder" >>"$dir/cbs-responder.log"
  wc -c <"$dir/cbs-responder.log" >"$dir/cbs-log-offset"
  launch "$dir/cbs.pid" "$dir/cbs-responder.log" -- "$(cat "$dir/cbs-python")" \
    "$repo/scripts/artemis/cbs-responder.py" --url "amqp://127.0.0.1:$amqp" \
    --key-name "$asb_key_name" --key "$asb_key" --log "$dir/cbs.log"
}

# cbs_ready DIR: the responder printed `ready` since its launch (it logged in anonymously,
# attached to $cbs and its own put-token request came back answered); 2 when it is gone.
cbs_ready() {
  local dir=$1 pid off
  if ! alive_pid "$dir/cbs.pid" "$cbs_pattern" >/dev/null; then
    pid=$(head -n 1 "$dir/cbs.pid" 2>/dev/null | tr -dc 0-9)
    [[ -n $pid ]] && running "$pid" && return 1
    echo "services: ERROR: the CBS responder exited" >&2
    return 2
  fi
  off=$(cat "$dir/cbs-log-offset" 2>/dev/null) || off=0
  tail -c "+$((off + 1))" "$dir/cbs-responder.log" | grep -qx 'cbs-responder: ready'
}

# cbs_start DIR: cbs_launch, then wait until it is ready (30 s); its time in DIR/cbs-ready-time.
cbs_start() {
  local dir=$1 t0=$EPOCHREALTIME
  cbs_launch "$dir"
  ready_poll=0.1 wait_ready 30 cbs_ready "$dir" "$dir/cbs-responder.log" || return 1
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", b - a }' >"$dir/cbs-ready-time"
}

cbs_alive() { alive_pid "$1/cbs.pid" "$cbs_pattern" >/dev/null; }
cbs_stop() { stop_pid "$1/cbs.pid" "$cbs_pattern" 5; }

# artemis_ctl ACTION [ARGS]: BABELQUEUE_ARTEMIS_CTL, on the broker of this run directory:
# broker_ctl's actions, and queue-stat [ARGS] (`artemis queue stat` as admin, ARGS e.g.
# --queueName NAME or --json).
artemis_ctl() {
  local rc=0 dir=$run/artemis core
  if [[ ${1:-} == queue-stat ]]; then
    shift
    [[ -f $dir/ports ]] || die "no Artemis broker in $run (services.sh start artemis)"
    read -r core _ <"$dir/ports"
    # (without the CLI's "Connection brokerURL = ..." line)
    "${artemis_env[@]}" "$dir/instance/bin/artemis" queue stat --silent \
      --url "tcp://127.0.0.1:$core" --user admin --password admin "$@" </dev/null 9>&- |
      sed '/^Connection brokerURL = /d'
    return
  fi
  broker_ctl artemis Artemis "$artemis_class" "$@" || rc=$?
  ((rc != 3)) || die "usage: \$BABELQUEUE_ARTEMIS_CTL stop | kill | start | restart |" \
    "kill-restart | pid | queue-stat [ARGS]"
  return "$rc"
}

# -- sqs --------------------------------------------------------------------------------
# ElasticMQ 1.7.1, an in-memory Amazon SQS-compatible server, for the SQS transport: run
# straight from the Maven Central jars of scripts/sqs/pom.xml (org.elasticmq.server.Main, no
# release jar), downloaded once (mvn dependency:copy-dependencies, about 37 MB) into
# ${BABELQUEUE_CACHE_DIR:-~/.cache/babelqueue}/sqs-<hash of the pom>/libs and reused by every
# run while the pom is unchanged (cache_fill). One small JVM (-Xmx256m, serial GC, C1 only:
# it starts in a few seconds) with its config (DIR/elasticmq.conf) and log in the run
# directory: the SQS REST interface (JSON and query protocols) on one free loopback port,
# sqs-limits = strict (real SQS queue name rules, message size and batch limits), queue URLs
# http://127.0.0.1:<port>/000000000000/<queue> (region us-east-1, account 000000000000); the
# Maven artifacts have no statistics UI, so that is its only port. It keeps queues and
# messages in memory only (queues-storage and messages-storage off): a restart starts empty.
sqs_pom=$repo/scripts/sqs/pom.xml
sqs_libs=  # set by sqs_fetch
sqs_class='org\.elasticmq\.server\.Main'
sqs_region=us-east-1
sqs_account=000000000000

# sqs_fetch: sets sqs_libs to the jar directory, downloading it first when needed.
sqs_fetch() {
  local cache
  cache=$cache_root/sqs-$(sha256sum "$sqs_pom" | cut -c1-16)
  sqs_libs=$cache/libs
  cache_fill "$cache" libs sqs sqs_download
}

# sqs_download: the jars of the pom into ./libs (cache_fill's FETCH).
sqs_download() { mvn_libs "$sqs_pom" 'elasticmq-server_2.13-*.jar'; }

# sqs_launch DIR: starts the server of DIR (configured by sqs_start) on its port.
sqs_launch() {
  local dir=$1 libs
  libs=$(cat "$dir/libs")
  [[ -f $libs/../complete ]] || die "the ElasticMQ jars in $libs are gone (start sqs anew)"
  echo "[$(date '+%F %T')] services.sh: starting the server" >>"$dir/sqs.log"
  # sqs_ready reads the log from here on (a restarted server appends to the old log)
  wc -c <"$dir/sqs.log" >"$dir/log-offset"
  launch "$dir/sqs.pid" "$dir/sqs.log" -- \
    java -Xms32m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k \
    -Djava.awt.headless=true -Dconfig.file="$dir/elasticmq.conf" \
    -cp "$libs/*" org.elasticmq.server.Main
}

# sqs_probe PORT: a SigV4-signed JSON-protocol ListQueues (any credentials do) answers HTTP
# 200 with a JSON object.
sqs_probe() {
  local out
  out=$(curl -sS --max-time 3 --aws-sigv4 "aws:amz:$sqs_region:sqs" --user test:test \
    -H 'Content-Type: application/x-amz-json-1.0' -H 'X-Amz-Target: AmazonSQS.ListQueues' \
    -d '{}' -w '\n%{http_code}' "http://127.0.0.1:$1/" 2>/dev/null </dev/null 9>&-) || return 1
  [[ ${out##*$'\n'} == 200 && ${out:0:1} == '{' ]]
}

# sqs_ready DIR: the server answers sqs_probe (2 when its process is gone, or its port was
# taken: then the JVM, which does not exit by itself, is stopped).
sqs_ready() {
  local dir=$1 port pid off
  if ! alive_pid "$dir/sqs.pid" "$sqs_class" >/dev/null; then
    # just launched, the process may not have exec'd java yet
    pid=$(head -n 1 "$dir/sqs.pid" 2>/dev/null | tr -dc 0-9)
    [[ -n $pid ]] && running "$pid" && return 1
    echo "services: ERROR: the ElasticMQ server exited" >&2
    return 2
  fi
  read -r port <"$dir/ports"
  sqs_probe "$port" && return 0
  off=$(cat "$dir/log-offset" 2>/dev/null) || off=0
  if tail -c "+$((off + 1))" "$dir/sqs.log" | grep -q 'BindException\|Address already in use'; then
    # ElasticMQ does not exit when its bind fails: stop the useless JVM
    echo "services: ERROR: the ElasticMQ port $port is taken" >&2
    stop_pid "$dir/sqs.pid" "$sqs_class" 5 group
    return 2
  fi
  return 1
}

sqs_start() {
  local dir=$1 port t0 f
  for f in java curl; do
    command -v "$f" >/dev/null || die "$f not found (scripts/apt-packages.txt)"
  done
  sqs_fetch || return 1
  read -r port < <(free_ports 1)
  echo "$port" >"$dir/ports"
  echo "$sqs_libs" >"$dir/libs"
  cat >"$dir/elasticmq.conf" <<EOF2
# written by scripts/services.sh: ElasticMQ on 127.0.0.1:$port only (HOCON; the keys are
# those of the reference.conf in elasticmq-rest-sqs_2.13-1.7.1.jar)
include classpath("application.conf")

# the address in the queue URLs it returns: http://127.0.0.1:$port/$sqs_account/<queue>
node-address {
  protocol = http
  host = "127.0.0.1"
  port = $port
  context-path = ""
}
generate-node-address = false

rest-sqs {
  enabled = true
  bind-port = $port
  bind-hostname = "127.0.0.1"
  # real SQS limits: queue names, message size (1 MiB), batch sizes, attribute values
  sqs-limits = strict
}
# (the Maven Central server has no statistics UI: rest-sqs is its only port)

# in memory only: no queue or message storage on disk
queues-storage {
  enabled = false
}
messages-storage {
  enabled = false
}

aws {
  region = $sqs_region
  accountId = $sqs_account
}
EOF2
  # The control script of BABELQUEUE_SQS_CTL (tests stop and restart the server with it).
  {
    echo '#!/usr/bin/env bash'
    echo "# stop | kill | start | restart | kill-restart | pid: the babelqueue test SQS server"
    echo "# (ElasticMQ, in memory: a restart starts with no queues) of $dir"
    echo "# (written by scripts/services.sh; see its header)."
    printf 'BABELQUEUE_SERVICES_DIR=%q exec bash %q sqs-ctl "$@"\n' \
      "$run" "$repo/scripts/services.sh"
  } >"$dir/sqsctl"
  chmod 755 "$dir/sqsctl"

  t0=$EPOCHREALTIME
  sqs_launch "$dir"
  ready_poll=0.2 wait_ready "$ready_timeout" sqs_ready "$dir" "$dir/sqs.log" || return 1
  {
    env_line BABELQUEUE_SQS_ENDPOINT "http://127.0.0.1:$port"
    env_line BABELQUEUE_SQS_URL "sqs://$sqs_region?endpoint=http://127.0.0.1:$port"
    env_line BABELQUEUE_SQS_CTL "$dir/sqsctl"
  } >"$dir/env"
  say "sqs ready in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s:" \
    "ElasticMQ on http://127.0.0.1:$port (region $sqs_region, account $sqs_account)"
}

sqs_alive() {
  [[ -f $1/ports ]] && sqs_ready "$1" 2>/dev/null
}

sqs_stop() { stop_pid "$1/sqs.pid" "$sqs_class" 30 group; }

# sqs_ctl ACTION: BABELQUEUE_SQS_CTL, on the server of this run directory (broker_ctl's
# actions). ElasticMQ keeps everything in memory: after stop + start, restart or kill-restart
# the server is back on the same port with no queues and no messages.
sqs_ctl() {
  local rc=0
  broker_ctl sqs ElasticMQ "$sqs_class" "$@" || rc=$?
  ((rc != 3)) ||
    die "usage: \$BABELQUEUE_SQS_CTL stop | kill | start | restart | kill-restart | pid"
  return "$rc"
}

# -- pulsar -----------------------------------------------------------------------------
# Apache Pulsar 4.0.0 standalone (org.apache.pulsar.PulsarStandaloneStarter: broker, one
# BookKeeper bookie and a RocksDB metadata store in one JVM, no ZooKeeper, no functions
# worker, no stream storage) run straight from the Maven Central jars of
# scripts/pulsar/pom.xml (pulsar-broker and its runtime dependencies, no release tarball),
# downloaded once (mvn dependency:copy-dependencies, about 230 MB in 312 jars) into
# ${BABELQUEUE_CACHE_DIR:-~/.cache/babelqueue}/pulsar-<hash of the pom>/libs and reused by every
# run while the pom is unchanged (cache_fill). Config (scripts/pulsar/standalone.conf plus the
# ports and paths of the run), data (DIR/data: bookie journal and ledgers, metadata) and log
# live in the run directory. Four free loopback ports, all bound to 127.0.0.1: the binary
# protocol, the same with TLS (tls_material's server certificate, PKCS#8 PEM key; no client
# certificate asked for), the web service (REST admin API and WebSocket API) and the bookie.
# Persistent: topics, messages and subscription cursors survive a restart and a SIGKILL.
pulsar_version=4.0.0
pulsar_pom=$repo/scripts/pulsar/pom.xml
pulsar_libs=  # set by pulsar_fetch
pulsar_class='org\.apache\.pulsar\.PulsarStandaloneStarter'

# pulsar_fetch: sets pulsar_libs to the jar directory, downloading it first when needed.
pulsar_fetch() {
  local cache
  cache=$cache_root/pulsar-$(sha256sum "$pulsar_pom" | cut -c1-16)
  pulsar_libs=$cache/libs
  cache_fill "$cache" libs pulsar pulsar_download
}

# pulsar_download: the jars of the pom into ./libs (cache_fill's FETCH).
pulsar_download() { mvn_libs "$pulsar_pom" "pulsar-broker-$pulsar_version.jar"; }

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
  libs=$(cat "$dir/libs")
  [[ -f $libs/../complete ]] || die "the Pulsar jars in $libs are gone (start pulsar anew)"
  read -r _ _ _ bookie <"$dir/ports"
  echo "[$(date '+%F %T')] services.sh: starting the standalone" >>"$dir/pulsar.log"
  # pulsar_ready reads the log from here on (a restarted broker appends to the old log)
  wc -c <"$dir/pulsar.log" >"$dir/log-offset"
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
  local dir=$1 broker web tls bookie pid off
  if ! alive_pid "$dir/pulsar.pid" "$pulsar_class" >/dev/null; then
    # just launched, env may not have exec'd java yet
    pid=$(head -n 1 "$dir/pulsar.pid" 2>/dev/null | tr -dc 0-9)
    [[ -n $pid ]] && running "$pid" && return 1
    echo "services: ERROR: the Pulsar standalone exited" >&2
    return 2
  fi
  read -r broker web tls bookie <"$dir/ports"
  off=$(cat "$dir/log-offset" 2>/dev/null) || off=0
  if tail -c "+$((off + 1))" "$dir/pulsar.log" |
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
  pulsar_fetch || return 1
  read -r broker web tls bookie < <(free_ports 4)
  echo "$broker $web $tls $bookie" >"$dir/ports"
  echo "$pulsar_libs" >"$dir/libs"
  mkdir -p "$dir/data" "$dir/tls"
  tls_material "$dir/tls" || return 1
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
EOF2
  } >"$dir/standalone.conf"
  # The control script of BABELQUEUE_PULSAR_CTL (tests stop and restart the broker with it).
  {
    echo '#!/usr/bin/env bash'
    echo "# stop | kill | start | restart | kill-restart | pid: the babelqueue test Pulsar"
    echo "# standalone of $dir (written by scripts/services.sh; see its header)."
    printf 'BABELQUEUE_SERVICES_DIR=%q exec bash %q pulsar-ctl "$@"\n' \
      "$run" "$repo/scripts/services.sh"
  } >"$dir/pulsarctl"
  chmod 755 "$dir/pulsarctl"

  t0=$EPOCHREALTIME
  pulsar_launch "$dir"
  ready_poll=0.5 wait_ready "$ready_timeout" pulsar_ready "$dir" "$dir/pulsar.log" \
    "$dir/probe.log" || return 1
  {
    env_line BABELQUEUE_PULSAR_URL "pulsar://127.0.0.1:$broker"
    env_line BABELQUEUE_PULSAR_TLS_URL "pulsar+ssl://localhost:$tls"
    env_line BABELQUEUE_PULSAR_TLS_CA "$dir/tls/ca.pem"
    env_line BABELQUEUE_PULSAR_ADMIN_URL "http://127.0.0.1:$web"
    env_line BABELQUEUE_PULSAR_LIBS "$pulsar_libs"
    env_line BABELQUEUE_PULSAR_CTL "$dir/pulsarctl"
  } >"$dir/env"
  say "pulsar ready in" \
    "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s:" \
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
    (($(tail -c +"$(($(cat "$dir/log-offset") + 1))" "$dir/pulsar.log" |
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

# pulsar_ctl ACTION: BABELQUEUE_PULSAR_CTL, on the standalone of this run directory
# (broker_ctl's actions).
pulsar_ctl() {
  local rc=0
  broker_ctl pulsar Pulsar "$pulsar_class" "$@" || rc=$?
  ((rc != 3)) ||
    die "usage: \$BABELQUEUE_PULSAR_CTL stop | kill | start | restart | kill-restart | pid"
  return "$rc"
}

# -- broker control (kafka, artemis, sqs, pulsar, postgres) ---------------------------------------
# kill_wait PIDFILE PATTERN LABEL: SIGKILL (to the process group), then wait until the
# process is gone.
kill_wait() {
  local pid i
  pid=$(alive_pid "$1" "$2") || return 0
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    alive_pid "$1" "$2" >/dev/null || return 0
    sleep 0.1
  done
  die "the $3 broker (PID $pid) survived SIGKILL"
}

# broker_ctl NAME LABEL PATTERN ACTION: the control command of the broker NAME of this run
# directory, whose PID file is NAME/NAME.pid (a process matching PATTERN), whose log is
# NAME/NAME.log, and which has NAME_launch DIR, NAME_ready DIR and NAME_stop DIR (and may
# have NAME_helpers_start DIR, run once the broker is ready after start, restart and
# kill-restart, and NAME_helpers_stop DIR, run after kill and kill-restart: the processes
# that live beside the broker, e.g. artemis's CBS responder; NAME_stop stops them too):
#   stop = NAME_stop (SIGTERM, wait, SIGKILL after 30 s), kill = SIGKILL and wait,
#   start = NAME_launch on the same ports and data, back once NAME_ready (a running broker
#   is kept), restart = stop + start, kill-restart = kill + start, pid = print its PID.
# Returns 3 for any other ACTION.
broker_ctl() {
  local name=$1 label=$2 pattern=$3 action=${4:-} dir=$run/$1 t=$SECONDS
  [[ -f $dir/ports ]] || die "no $label broker in $run (services.sh start $name)"
  dir=$(readlink -f "$dir")
  case $action in
    stop) "${name}_stop" "$dir" ;;
    kill)
      kill_wait "$dir/$name.pid" "$pattern" "$label"
      if declare -F "${name}_helpers_stop" >/dev/null; then "${name}_helpers_stop" "$dir"; fi
      ;;
    pid) alive_pid "$dir/$name.pid" "$pattern" || die "the $label broker is not running" ;;
    start | restart | kill-restart)
      case $action in
        restart) "${name}_stop" "$dir" ;;
        kill-restart)
          kill_wait "$dir/$name.pid" "$pattern" "$label"
          if declare -F "${name}_helpers_stop" >/dev/null; then "${name}_helpers_stop" "$dir"; fi
          ;;
      esac
      if alive_pid "$dir/$name.pid" "$pattern" >/dev/null; then
        say "$name already running"
      else
        "${name}_launch" "$dir"
      fi
      # (probe.log: artemis's readiness probe)
      wait_ready "$ready_timeout" "${name}_ready" "$dir" "$dir/$name.log" "$dir/probe.log" ||
        exit 1
      if declare -F "${name}_helpers_start" >/dev/null; then
        "${name}_helpers_start" "$dir" || exit 1
      fi
      say "$name $action: ready in $((SECONDS - t)) s"
      ;;
    *) return 3 ;;
  esac
}

# -- commands ---------------------------------------------------------------------------
is_known() {
  local name
  for name in "${known[@]}"; do [[ $name == "$1" ]] && return 0; done
  return 1
}

# fresh_dir NAME: the service's directory, created fresh. The rabbitmq (postgres) user must
# reach it;
# if it cannot (e.g. a checkout under /root), the data go to a /tmp directory and the run
# directory holds a symlink to it.
fresh_dir() {
  local name=$1 dir=$run/$1 real
  if [[ -L $dir ]]; then
    real=$(readlink "$dir")
    [[ $real == /tmp/babelqueue-"$name".* ]] && rm -rf "$real"
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  local as=()
  [[ $name == rabbitmq ]] && as=("${as_rabbitmq[@]}")
  [[ $name == postgres ]] && as=("${as_postgres[@]}")
  if ((${#as[@]})) && ! "${as[@]}" test -x "$dir"; then
    rmdir "$dir"
    real=$(mktemp -d "/tmp/babelqueue-$name.XXXXXX")
    chmod 755 "$real"
    ln -s "$real" "$dir"
  fi
}

start() {
  local name dir failed=0
  for name in "$@"; do
    is_known "$name" || die "unknown service '$name' (known: ${known[*]})"
  done
  for name in "$@"; do
    dir=$run/$name
    if [[ -f $dir/env ]] && "${name}_alive" "$(readlink -f "$dir")"; then
      say "$name already running (run dir $run)"
      continue
    fi
    [[ -d $dir ]] && "${name}_stop" "$(readlink -f "$dir")"  # leftovers of a dead run
    fresh_dir "$name"
    if ! "${name}_start" "$(readlink -f "$dir")"; then
      echo "services: ERROR: $name did not start; logs in $dir" >&2
      "${name}_stop" "$(readlink -f "$dir")" || true
      failed=1
    fi
  done
  write_env
  say "environment in $run/services.env"
  return "$failed"
}

stop() {
  local names=("$@") name dir
  ((${#names[@]})) || names=("${known[@]}")
  for name in "${names[@]}"; do
    is_known "$name" || die "unknown service '$name' (known: ${known[*]})"
    dir=$run/$name
    [[ -e $dir ]] || continue
    "${name}_stop" "$(readlink -f "$dir")"
    rm -f "$dir/env"
    say "$name stopped"
  done
  [[ -d $run ]] && write_env
  return 0
}

cmd=${1:-}
shift || true
case $cmd in
  start | stop)
    [[ $cmd == start && $# -eq 0 ]] && die "usage: services.sh start NAME... (${known[*]})"
    mkdir -p "$run"
    run=$(cd "$run" && pwd)
    exec 9>"$run/.lock"
    flock -w 300 9 || die "another services.sh holds $run/.lock"
    "$cmd" "$@"
    ;;
  kafka-ctl | artemis-ctl | sqs-ctl | pulsar-ctl | postgres-ctl)
    [[ -d $run ]] || die "no run directory $run"
    run=$(cd "$run" && pwd)
    exec 9>"$run/.lock"
    flock -w 300 9 || die "another services.sh holds $run/.lock"
    "${cmd%-ctl}_ctl" "$@"
    ;;
  env)
    [[ -f $run/services.env ]] && grep '^export ' "$run/services.env"
    exit 0
    ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 2
    ;;
esac
