# shellcheck shell=bash
# The sqs service of scripts/services.sh (sourced by it). Exports:
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
#                                          port; queues and messages survive (H2 storage)
#
# ElasticMQ 1.7.1, an Amazon SQS-compatible server, for the SQS transport: run
# straight from the Maven Central jars of scripts/sqs/pom.xml (org.elasticmq.server.Main, no
# release jar), downloaded once (mvn dependency:copy-dependencies, about 37 MB) into
# ${BABELQUEUE_CACHE_DIR:-~/.cache/babelqueue}/sqs-<hash of the pom>/libs and reused by every
# run while the pom is unchanged (pom_jars, downloads.sh). One small JVM (-Xmx256m, serial GC, C1 only:
# it starts in a few seconds) with its config (DIR/elasticmq.conf) and log in the run
# directory: the SQS REST interface (JSON and query protocols) on one free loopback port,
# sqs-limits = strict (real SQS queue name rules, message size and batch limits), queue URLs
# http://127.0.0.1:<port>/000000000000/<queue> (region us-east-1, account 000000000000); the
# Maven artifacts have no statistics UI, so that is its only port. It keeps queues and
# messages in an H2 database in the run directory (messages-storage, the jars of
# elasticmq-persistence-sql): a restart, a SIGKILL included, loses nothing.
sqs_pom=$repo/scripts/sqs/pom.xml
sqs_class='org\.elasticmq\.server\.Main'
sqs_region=us-east-1
sqs_account=000000000000

# sqs_launch DIR: starts the server of DIR (configured by sqs_start) on its port.
sqs_launch() {
  local dir=$1 libs
  libs=$(jars_of "$dir" ElasticMQ sqs) || exit 1
  echo "[$(date '+%F %T')] services.sh: starting the server" >>"$dir/sqs.log"
  # sqs_ready reads the log from here on (a restarted server appends to the old log)
  log_mark "$dir/sqs.log" "$dir/log-offset"
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
  local dir=$1 port
  launched "$dir/sqs.pid" "$sqs_class" "the ElasticMQ server" || return
  read -r port <"$dir/ports"
  sqs_probe "$port" && return 0
  if log_since "$dir/sqs.log" "$dir/log-offset" | grep -q 'BindException\|Address already in use'; then
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
  pom_jars sqs "$sqs_pom" 'elasticmq-server_2.13-*.jar' || return 1
  local sqs_libs=$jars_dir
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

# queues and messages kept in an H2 database in the run directory (the jars of
# elasticmq-persistence-sql), so that a restart loses nothing — as SQS never does: the
# crash-and-restart matrix (tests/crash_matrix) kills and restarts this server mid-consume
messages-storage {
  enabled = true
  uri = "jdbc:h2:$dir/elasticmq-h2"
  prune-data-on-init = false
}

aws {
  region = $sqs_region
  accountId = $sqs_account
}
EOF2
  # The control script of BABELQUEUE_SQS_CTL (tests stop and restart the server with it).
  ctl_script sqs "$dir"

  t0=$EPOCHREALTIME
  sqs_launch "$dir"
  ready_poll=0.2 wait_ready "$ready_timeout" sqs_ready "$dir" "$dir/sqs.log" || return 1
  {
    env_line BABELQUEUE_SQS_ENDPOINT "http://127.0.0.1:$port"
    env_line BABELQUEUE_SQS_URL "sqs://$sqs_region?endpoint=http://127.0.0.1:$port"
    env_line BABELQUEUE_SQS_CTL "$dir/sqsctl"
  } >"$dir/env"
  say "sqs ready in $(elapsed "$t0") s:" \
    "ElasticMQ on http://127.0.0.1:$port (region $sqs_region, account $sqs_account)"
}

sqs_alive() {
  [[ -f $1/ports ]] && sqs_ready "$1" 2>/dev/null
}

sqs_stop() { stop_pid "$1/sqs.pid" "$sqs_class" 30 group; }

# BABELQUEUE_SQS_CTL, on the server of this run directory (control.sh's actions): after stop +
# start, restart or kill-restart the server is back on the same port with its queues and
# messages (H2 storage).
ctl_register sqs ElasticMQ "$sqs_class" \
  "SQS server (ElasticMQ, H2 storage: a restart keeps queues and messages)"
