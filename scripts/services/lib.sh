# shellcheck shell=bash
# Shared helpers of scripts/services.sh (sourced by it, after it set `repo`, `run` and
# `known`): messages, free ports, process control by recorded PID, readiness polling, the
# environment files, TLS material, and the start/stop commands every service goes through.

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

# stop_pid FILE PATTERN [SECONDS] [GROUP] [SIGNAL]: SIGNAL (default TERM), wait up to SECONDS
# (default 10), then SIGKILL; both to the process group when GROUP is `group`, only the
# SIGKILL when it is `kill-group`.
stop_pid() {
  local pid target i
  pid=$(alive_pid "$1" "$2") || return 0
  target=$pid
  [[ ${4:-} == group ]] && target=-$pid
  kill -"${5:-TERM}" -- "$target" 2>/dev/null || true
  for ((i = 0; i < ${3:-10} * 10; i++)); do
    alive_pid "$1" "$2" >/dev/null || return 0
    sleep 0.1
  done
  [[ ${4:-} == kill-group ]] && target=-$pid
  kill -KILL -- "$target" 2>/dev/null || true
}

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

# running PID: the process exists and is not a zombie.
running() {
  local state
  state=$(awk '{print $3}' /proc/"$1"/stat 2>/dev/null) && [[ -n $state && $state != Z ]]
}

# launched PIDFILE PATTERN WHAT: for a readiness check, whether the process `launch` started
# is up: 0 when its command line matches PATTERN; 1 when it is still starting (just
# launched, the launcher may not have exec'd the server yet: its command line is still the
# launching shell's, or env's); 2, saying "WHAT exited", when it is gone.
launched() {
  local pid
  alive_pid "$1" "$2" >/dev/null && return 0
  pid=$(head -n 1 "$1" 2>/dev/null | tr -dc 0-9)
  [[ -n $pid ]] && running "$pid" && return 1
  echo "services: ERROR: $3 exited" >&2
  return 2
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

# log_mark LOG OFFSETFILE: remembers LOG's size, so that log_since reads only what a server
# (re)launched from here on writes (a restarted server appends to its old log).
log_mark() { wc -c <"$1" >"$2"; }
# log_since LOG OFFSETFILE: LOG from the offset log_mark recorded (all of it without one).
log_since() {
  local off
  off=$(cat "$2" 2>/dev/null) || off=0
  tail -c "+$((off + 1))" "$1"
}

# elapsed T0: seconds since $EPOCHREALTIME was T0, one decimal.
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

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

# env_line NAME VALUE: one `export` line, shell-quoted.
env_line() { printf 'export %s=%q\n' "$1" "$2"; }

# write_env: services.env, the env fragments of every started service in the order of `known`.
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

# -- commands ---------------------------------------------------------------------------
is_known() {
  local name
  for name in "${known[@]}"; do [[ $name == "$1" ]] && return 0; done
  return 1
}

# fresh_dir NAME: the service's directory, created fresh. A service that runs as another
# user (an array as_NAME with the setpriv prefix: rabbitmq, postgres) must reach it; if that
# user cannot (e.g. a checkout under /root), the data go to a /tmp directory and the run
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
  if declare -p "as_$name" >/dev/null 2>&1; then
    local -n as_user="as_$name"
    as=("${as_user[@]}")
  fi
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
