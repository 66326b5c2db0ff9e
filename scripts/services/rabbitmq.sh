# shellcheck shell=bash
# The rabbitmq service of scripts/services.sh (sourced by it). Exports:
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
rabbitmq_bin=/usr/lib/rabbitmq/bin

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
