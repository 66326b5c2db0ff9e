# shellcheck shell=bash
# The Redis services of scripts/services.sh (sourced by it). Exports:
#   redis     BABELQUEUE_REDIS_URL         redis://127.0.0.1:<port>
#   redis-cluster BABELQUEUE_REDIS_CLUSTER_URL  redis://127.0.0.1:<p1>,127.0.0.1:<p2>,127.0.0.1:<p3>
#                                          ?cluster=1: a Redis Cluster of three primaries (no
#                                          replicas; slots split evenly by redis-cli --cluster
#                                          create), each in its own directory, no persistence
#             BABELQUEUE_REDIS_CLUSTER_PORTS  "<p1> <p2> <p3>" (for redis-cli -c -p ...)
# (The Redis Sentinel groups are started by their own tests, tests/redis/.)

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
