# shellcheck shell=bash
# The postgres service of scripts/services.sh (sourced by it). Exports:
#   postgres  BABELQUEUE_POSTGRES_URL      postgresql://babelqueue@127.0.0.1:<port>/babelqueue
#                                          (PostgreSQL 15, a private cluster: superuser
#                                          babelqueue, trust authentication on 127.0.0.1 and on
#                                          the unix socket in the run dir's postgres/, fsync off)
#             BABELQUEUE_POSTGRES_TLS_CA   the CA of the server's certificate (TLS is on beside
#                                          plain connections: SAN DNS:localhost, IP:127.0.0.1),
#                                          for sslmode=verify-full tests
#             BABELQUEUE_POSTGRES_CTL      "$BABELQUEUE_POSTGRES_CTL" stop | kill | start | restart |
#                                          kill-restart | pid like the Kafka one (stop = fast
#                                          shutdown; committed rows survive each of them)

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
  mkdir -p "$dir/tls"
  tls_material "$dir/tls" || return 1
  if ((EUID == 0)); then chown -R "$pg_user" "$dir"; fi
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
# TLS for the clients that ask (sslmode=require / verify-*); plain connections still work
ssl = on
ssl_cert_file = '$dir/tls/server.pem'
ssl_key_file = '$dir/tls/server.key'
PGCONF
  # The control script of BABELQUEUE_POSTGRES_CTL (tests stop and restart the server with it).
  ctl_script postgres "$dir"
  postgres_launch "$dir"
  ready_poll=0.2 wait_ready 60 postgres_server_ready "$dir" "$dir/postgres.log" || return 1
  if ! psql -X -q -h 127.0.0.1 -p "$port" -U babelqueue -d postgres \
      -c 'CREATE DATABASE babelqueue' >>"$dir/initdb.log" 2>&1 </dev/null; then
    echo "services: ERROR: CREATE DATABASE babelqueue failed" >&2
    return 1
  fi
  {
    env_line BABELQUEUE_POSTGRES_URL "postgresql://babelqueue@127.0.0.1:$port/babelqueue"
    env_line BABELQUEUE_POSTGRES_TLS_CA "$dir/tls/ca.pem"
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
postgres_stop() { stop_pid "$1/postgres.pid" "$pg_pattern" 30 kill-group INT; }

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

# BABELQUEUE_POSTGRES_CTL, on the server of this run directory (control.sh's actions; kill =
# SIGKILL to the postmaster and its backends, and the next start runs crash recovery:
# committed rows survive).
ctl_register postgres PostgreSQL "$pg_pattern" "PostgreSQL server"
