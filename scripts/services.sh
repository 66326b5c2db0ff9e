#!/usr/bin/env bash
# The one place real test servers are started (scripts/test.sh, CI, developers):
#
#   bash scripts/services.sh start NAME...    start services (rabbitmq, redis, redis-cluster,
#                                             kafka, artemis,
#                                             sqs, pulsar, postgres); one already running from
#                                             this run dir is kept
#   bash scripts/services.sh stop [NAME...]   stop them (default: every service of the run dir)
#   bash scripts/services.sh env              print the export lines (= services.env)
#   bash scripts/services.sh kafka-ctl ACTION what $BABELQUEUE_KAFKA_CTL runs (control.sh)
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
# The code is in scripts/services/: one file per service, whose header lists the variables
# it exports into services.env (rabbitmq.sh; redis.sh: redis and redis-cluster; kafka.sh;
# artemis.sh and asb.sh, the Azure Service Bus stand-in on that broker; sqs.sh; pulsar.sh;
# postgres.sh), and what they share: lib.sh (ports, processes, readiness, services.env, TLS
# material, the start and stop commands), downloads.sh (the Maven Central and PyPI cache)
# and control.sh (the NAME-ctl commands: the actions stop | kill | start | restart |
# kill-restart | pid of every broker, one table).
#
# Adding a service is a file scripts/services/<name>.sh, sourced below, with three
# functions: <name>_start DIR (start the server with `launch`, which records its PID, wait
# until a client round trip works, write DIR/env), <name>_alive DIR and <name>_stop DIR,
# plus its name in `known`. A control command (BABELQUEUE_<NAME>_CTL) is <name>_launch DIR,
# <name>_ready DIR and a `ctl_register` line (control.sh).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
run=${BABELQUEUE_SERVICES_DIR:-$repo/build/services}
known=(rabbitmq redis redis-cluster kafka artemis sqs pulsar postgres)  # also the order of services.env

for part in lib downloads control rabbitmq redis postgres kafka artemis asb sqs pulsar; do
  # shellcheck source=/dev/null
  . "$repo/scripts/services/$part.sh"
done

cmd=${1:-}
shift || true
# NAME-ctl of a broker with a control command (control.sh); anything else prints the usage.
ctl=${cmd%-ctl}
[[ $cmd == *-ctl && -n $ctl && -n ${ctl_label[$ctl]:-} ]] && cmd=ctl
case $cmd in
  start | stop)
    [[ $cmd == start && $# -eq 0 ]] && die "usage: services.sh start NAME... (${known[*]})"
    mkdir -p "$run"
    run=$(cd "$run" && pwd)
    exec 9>"$run/.lock"
    flock -w 300 9 || die "another services.sh holds $run/.lock"
    "$cmd" "$@"
    ;;
  ctl)
    [[ -d $run ]] || die "no run directory $run"
    run=$(cd "$run" && pwd)
    exec 9>"$run/.lock"
    flock -w 300 9 || die "another services.sh holds $run/.lock"
    # (`|| exit`: errexit is off inside, as it always was: the steps check what matters and
    # die or exit themselves; the status is the last step's)
    broker_ctl "$ctl" "$@" || exit
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
