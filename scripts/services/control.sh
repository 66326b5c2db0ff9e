# shellcheck shell=bash
# The control commands of scripts/services.sh (sourced by it): `services.sh NAME-ctl ACTION`,
# what $BABELQUEUE_<NAME>_CTL runs, on the broker NAME of this run directory (kafka, artemis,
# sqs, pulsar, postgres; rabbitmq's is rabbitmqctl itself). Every broker has the same
# actions, each a row of the table below (its steps); a broker file registers itself with
# ctl_register, and may add actions of its own with ctl_extra (artemis: queue-stat).
#
# A registered broker NAME has its PID file NAME/NAME.pid (a process matching its PATTERN)
# and its log NAME/NAME.log in the run directory, and functions NAME_launch DIR, NAME_ready
# DIR and NAME_stop DIR; it may have NAME_helpers_start DIR, run once the broker is ready
# after start, restart and kill-restart, and NAME_helpers_stop DIR, run after kill and
# kill-restart: the processes that live beside the broker, e.g. artemis's CBS responder
# (NAME_stop stops them too).

ctl_actions=(stop kill start restart kill-restart pid)  # (the order of the usage line)
# ACTION -> its steps (ctl_step_<step> NAME DIR):
#   stop   NAME_stop: SIGTERM, wait, SIGKILL after 30 s (postgres: SIGINT, a fast shutdown)
#   kill   SIGKILL and wait (the process group), then NAME_helpers_stop
#   start  NAME_launch on the same ports and data (a running broker is kept), back once
#          NAME_ready, then NAME_helpers_start
#   pid    print its PID
declare -A ctl_steps=(
  [stop]="stop"
  [kill]="kill"
  [start]="start"
  [restart]="stop start"
  [kill-restart]="kill start"
  [pid]="pid"
)
declare -A ctl_label=() ctl_pattern=() ctl_what=() ctl_extra=() ctl_extra_usage=()

# ctl_register NAME LABEL PATTERN WHAT: NAME has a control command; LABEL names it in
# messages ("the LABEL broker"), PATTERN matches its process's command line, WHAT describes
# it in the header of the control script (DIR/NAMEctl, see ctl_script).
ctl_register() {
  ctl_label[$1]=$2
  ctl_pattern[$1]=$3
  ctl_what[$1]=$4
}

# ctl_extra NAME ACTION USAGE FUNCTION: one more action of NAME's control command:
# `FUNCTION DIR ARGS...` (USAGE: ACTION and its arguments, for the usage line).
ctl_extra() {
  ctl_extra[$1:$2]=$4
  ctl_extra_usage[$1]+=" | $3"
}

# ctl_usage NAME: the actions of NAME's control command, `stop | kill | ... | pid [| extra]`.
ctl_usage() {
  local IFS='|'
  local line="${ctl_actions[*]}"
  echo "${line//|/ | }${ctl_extra_usage[$1]:-}"
}

# ctl_script NAME DIR: writes DIR/NAMEctl, the script $BABELQUEUE_<NAME>_CTL names (tests
# stop and restart the broker with it): `services.sh NAME-ctl` under this run directory.
ctl_script() {
  local name=$1 dir=$2
  {
    echo '#!/usr/bin/env bash'
    echo "# $(ctl_usage "$name"): the babelqueue test ${ctl_what[$name]}"
    echo "# of $dir (written by scripts/services.sh; see scripts/services/control.sh)."
    printf 'BABELQUEUE_SERVICES_DIR=%q exec bash %q %s-ctl "$@"\n' \
      "$run" "$repo/scripts/services.sh" "$name"
  } >"$dir/${name}ctl"
  chmod 755 "$dir/${name}ctl"
}

ctl_step_stop() { "${1}_stop" "$2"; }

ctl_step_kill() {
  kill_wait "$2/$1.pid" "${ctl_pattern[$1]}" "${ctl_label[$1]}"
  if declare -F "${1}_helpers_stop" >/dev/null; then "${1}_helpers_stop" "$2"; fi
}

ctl_step_pid() {
  alive_pid "$2/$1.pid" "${ctl_pattern[$1]}" || die "the ${ctl_label[$1]} broker is not running"
}

ctl_step_start() {
  local name=$1 dir=$2
  if alive_pid "$dir/$name.pid" "${ctl_pattern[$name]}" >/dev/null; then
    say "$name already running"
  else
    "${name}_launch" "$dir"
  fi
  # (probe.log: artemis's and pulsar's readiness probes)
  wait_ready "$ready_timeout" "${name}_ready" "$dir" "$dir/$name.log" "$dir/probe.log" ||
    exit 1
  if declare -F "${name}_helpers_start" >/dev/null; then
    "${name}_helpers_start" "$dir" || exit 1
  fi
}

# broker_ctl NAME ACTION [ARGS...]: runs ACTION's steps (or NAME's extra ACTION) on the
# broker NAME of this run directory; dies with the usage line for any other ACTION.
broker_ctl() {
  local name=$1 action=${2:-} dir=$run/$1 t=$SECONDS step
  [[ -n ${ctl_label[$name]:-} ]] || die "no control command for '$name'"
  [[ -f $dir/ports ]] || die "no ${ctl_label[$name]} broker in $run (services.sh start $name)"
  dir=$(readlink -f "$dir")
  if [[ -n $action && -n ${ctl_extra[$name:$action]:-} ]]; then
    shift 2
    "${ctl_extra[$name:$action]}" "$dir" "$@"
    return
  fi
  [[ -n $action && -n ${ctl_steps[$action]:-} ]] ||
    die "usage: \$BABELQUEUE_${name^^}_CTL $(ctl_usage "$name")"
  for step in ${ctl_steps[$action]}; do
    "ctl_step_$step" "$name" "$dir"
  done
  if [[ ${ctl_steps[$action]} == *start ]]; then
    say "$name $action: ready in $((SECONDS - t)) s"
  fi
}
