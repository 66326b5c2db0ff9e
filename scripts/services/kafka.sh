# shellcheck shell=bash
# The kafka service of scripts/services.sh (sourced by it). Exports:
#   kafka     BABELQUEUE_KAFKA_URL         kafka://127.0.0.1:<port> (Apache Kafka 4.1.1, KRaft,
#                                          one node that is broker and controller)
#             BABELQUEUE_KAFKA_BOOTSTRAP   127.0.0.1:<port> (bootstrap.servers)
#             BABELQUEUE_KAFKA_LIBS        the broker's jar directory, with Kafka's tools:
#                                          java -cp "$BABELQUEUE_KAFKA_LIBS/*"
#                                          org.apache.kafka.tools.ProducerPerformance ...
#             BABELQUEUE_KAFKA_SSL_BOOTSTRAP      127.0.0.1:<port>, listener SSL (TLS, server
#                                          certificate of tls_material, SAN IP:127.0.0.1)
#             BABELQUEUE_KAFKA_SASL_SSL_BOOTSTRAP 127.0.0.1:<port>, listener SASL_SSL (TLS +
#                                          PLAIN; SCRAM users, added at format time or with
#                                          ConfigCommand, were refused to librdkafka 2.0.2's
#                                          proof by this broker: not offered)
#             BABELQUEUE_KAFKA_TLS_CA      the CA file of both
#             BABELQUEUE_KAFKA_SASL_USER / _PASSWORD  the SASL/PLAIN user
#             BABELQUEUE_KAFKA_CTL         "$BABELQUEUE_KAFKA_CTL" stop | kill | start | restart |
#                                          kill-restart | pid: stop = SIGTERM and wait (SIGKILL
#                                          after 30 s), kill = SIGKILL and wait, start = the same
#                                          ports and data again, back once it is ready
#                                          (topics, records and committed offsets survive)
#
# Apache Kafka 4.1.1 as one KRaft node (process.roles=broker,controller) run straight from
# the Maven Central jars of scripts/kafka/pom.xml (no release tarball). The jars are
# downloaded once (mvn dependency:copy-dependencies, about 55 MB) into
# ${BABELQUEUE_CACHE_DIR:-~/.cache/babelqueue}/kafka-<hash of the pom>/libs and reused by every
# run while the pom is unchanged (pom_jars, downloads.sh). The node itself (config, data, log) lives in
# the run directory and is formatted afresh at each start.
kafka_pom=$repo/scripts/kafka/pom.xml

# kafka_launch DIR: starts the broker of DIR (configured by kafka_start) on its ports and data.
kafka_launch() {
  local dir=$1 libs
  libs=$(jars_of "$dir" Kafka kafka) || exit 1
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
  local plain
  launched "$1/kafka.pid" 'kafka\.Kafka' "the Kafka broker" || return
  read -r plain _ _ _ <"$1/ports"
  kafka_probe "$plain"
}

kafka_start() {
  local dir=$1 plain ctrl ssl sasl id t pass user=bq-client secret
  command -v java >/dev/null ||
    die "java not installed (scripts/apt-packages.txt: openjdk-17-jre-headless)"
  pom_jars kafka "$kafka_pom" 'kafka_2.13-*.jar' || return 1
  local kafka_libs=$jars_dir
  read -r plain ctrl ssl sasl < <(free_ports 4)
  echo "$plain $ctrl $ssl $sasl" >"$dir/ports"
  # TLS and SASL listeners beside PLAINTEXT, for the security tests: the keystore of
  # tls_material's server certificate, and one user known to PLAIN (the JAAS line).
  # Throwaway secrets of a loopback broker.
  mkdir -p "$dir/tls"
  pass=$(python3 -c 'import secrets; print(secrets.token_hex(12))')
  secret=$(python3 -c 'import secrets; print(secrets.token_hex(12))')
  tls_material "$dir/tls" "$pass" || return 1
  echo "$kafka_libs" >"$dir/libs"
  mkdir -p "$dir/data"
  cp "$repo/scripts/kafka/log4j2.properties" "$dir/log4j2.properties"
  cat >"$dir/server.properties" <<EOF2
# written by scripts/services.sh: one KRaft node, broker and controller, on 127.0.0.1 only
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$ctrl
listeners=PLAINTEXT://127.0.0.1:$plain,CONTROLLER://127.0.0.1:$ctrl,SSL://127.0.0.1:$ssl,SASL_SSL://127.0.0.1:$sasl
advertised.listeners=PLAINTEXT://127.0.0.1:$plain,SSL://127.0.0.1:$ssl,SASL_SSL://127.0.0.1:$sasl
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL
ssl.keystore.type=PKCS12
ssl.keystore.location=$dir/tls/server.p12
ssl.keystore.password=$pass
ssl.key.password=$pass
ssl.client.auth=none
sasl.enabled.mechanisms=PLAIN
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$user="$secret";
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
  ctl_script kafka "$dir"

  kafka_launch "$dir"
  wait_ready "$ready_timeout" kafka_ready "$dir" "$dir/kafka.log" || return 1
  {
    env_line BABELQUEUE_KAFKA_URL "kafka://127.0.0.1:$plain"
    env_line BABELQUEUE_KAFKA_BOOTSTRAP "127.0.0.1:$plain"
    env_line BABELQUEUE_KAFKA_LIBS "$kafka_libs"
    env_line BABELQUEUE_KAFKA_SSL_BOOTSTRAP "127.0.0.1:$ssl"
    env_line BABELQUEUE_KAFKA_SASL_SSL_BOOTSTRAP "127.0.0.1:$sasl"
    env_line BABELQUEUE_KAFKA_TLS_CA "$dir/tls/ca.pem"
    env_line BABELQUEUE_KAFKA_SASL_USER "$user"
    env_line BABELQUEUE_KAFKA_SASL_PASSWORD "$secret"
    env_line BABELQUEUE_KAFKA_CTL "$dir/kafkactl"
  } >"$dir/env"
  say "kafka ready in $((SECONDS - t)) s (format included): 127.0.0.1:$plain, controller 127.0.0.1:$ctrl"
}

kafka_alive() {
  [[ -f $1/ports ]] && kafka_ready "$1" 2>/dev/null
}

kafka_stop() { stop_pid "$1/kafka.pid" 'kafka\.Kafka' 30 group; }

# BABELQUEUE_KAFKA_CTL, on the broker of this run directory (control.sh's actions). After a
# SIGKILL the new broker is ready only once the controller has let the killed incarnation's
# session expire (broker.session.timeout.ms, 9 s): kill-restart takes 16-21 s, restart 7-14
# (2 cores, idle to busy).
ctl_register kafka Kafka 'kafka\.Kafka' "Kafka broker"
