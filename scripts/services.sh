#!/usr/bin/env bash
# The one place real test servers are started (scripts/test.sh, CI, developers):
#
#   bash scripts/services.sh start NAME...    start services (rabbitmq, redis); one already
#                                             running from this run directory is kept
#   bash scripts/services.sh stop [NAME...]   stop them (default: every service of the run dir)
#   bash scripts/services.sh env              print the export lines (= services.env)
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
#
# Adding a service (kafka, artemis, elasticmq, pulsar ...) is three functions below,
# <name>_start DIR (start the server with `launch`, which records its PID, wait until a
# client round trip works, write DIR/env), <name>_alive DIR and <name>_stop DIR, plus its
# name in `known`.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
run=${BABELQUEUE_SERVICES_DIR:-$repo/build/services}
known=(rabbitmq redis)  # also the order of services.env
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
# ENVFILE's exports; records its PID. The lock (fd 9) is not inherited: a server holding it
# would block every later services.sh.
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
  ) >"$log" 2>&1 </dev/null 9>&- &
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

# wait_ready SECONDS CHECK DIR LOG...: polls `CHECK DIR` until it succeeds; gives up when it
# returns 2 (the server died) or after SECONDS, printing the tail of each LOG.
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
    sleep 1
  done
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

# -- rabbitmq ---------------------------------------------------------------------------
# A private node (own node name, ports, epmd, Erlang cookie, data) run as user rabbitmq when
# we are root (the server refuses to run as root), as ourselves otherwise.
as_rabbitmq=()
if ((EUID == 0)); then
  as_rabbitmq=(setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups)
fi

# tls_material DIR: throwaway CA, server (CN/SAN localhost, 127.0.0.1) and client certificates.
tls_material() {
  local d=$1 name
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
    rm -f ./*.csr ./*.ext ca.srl
    chmod 600 ./*.key
  ) >"$d/openssl.log" 2>&1 || { cat "$d/openssl.log" >&2; return 1; }
}

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

# -- commands ---------------------------------------------------------------------------
is_known() {
  local name
  for name in "${known[@]}"; do [[ $name == "$1" ]] && return 0; done
  return 1
}

# fresh_dir NAME: the service's directory, created fresh. The rabbitmq user must reach it;
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
  if [[ $name == rabbitmq ]] && ((EUID == 0)) &&
      ! "${as_rabbitmq[@]}" test -x "$dir"; then
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
  env)
    [[ -f $run/services.env ]] && grep '^export ' "$run/services.env"
    exit 0
    ;;
  *)
    sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
