#!/usr/bin/env bash
# Measures the Kafka bars of the kafka:// issue: `babelqueue bench --broker kafka://...` beside,
# in the same run, (a) plain librdkafka loops with the same settings (bench/kafka_ceiling.cpp,
# the ceiling of this client library; bar >= 80 %), (b) the Python SDK doing the same job
# (bench/peers/python_kafka_bench.py; bar >= 5x) and (c) Kafka's own ProducerPerformance /
# ConsumerPerformance (the Java client, from the broker's jars), several interleaved rounds,
# ratios per round, medians at the end.
#   BABELQUEUE_SERVICES_DIR=/tmp/svc bash scripts/services.sh start kafka
#   source /tmp/svc/services.env       # BABELQUEUE_KAFKA_URL, BABELQUEUE_KAFKA_LIBS
#   bash bench/kafka_rounds.sh [rounds]  (default 3)
# Needs build/release/cli/babelqueue and build/release/bench/kafka_ceiling
#   (cmake --preset release && cmake --build build/release --target babelqueue_cli kafka_ceiling)
# and the Python peer with the kafka extra (scripts/setup-python-peer.sh; $BABELQUEUE_PEER_PYTHON
# or build/peer-python.txt). Without java or BABELQUEUE_KAFKA_LIBS the Java rows are left out.
# Environment: N_SINGLE (awaited single publishes), N_BATCH (publishes in batches of BATCH),
# N_PIPE (one batch of N_PIPE = everything enqueued, then awaited; these topics are also the
# ones consumed), N_PY (Python fire-and-forget publishes), N_PY_SETTLE (Python awaited
# publishes), N_PY_CON (Python consume: one synchronous commit per record), N_JAVA
# (ProducerPerformance records, then consumed by ConsumerPerformance), BATCH (K, default 64).
# Every measurement uses its own topic, created first (so no run times the broker's
# auto-creation of its topic) and deleted afterwards, and its own consumer group. The broker,
# the clients and the Java/Python peers share the machine's cores: run it on a quiet machine.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-3}
cli=${BABELQUEUE_CLI:-$repo/build/release/cli/babelqueue}
ceiling=${BABELQUEUE_CEILING:-$repo/build/release/bench/kafka_ceiling}
url=${BABELQUEUE_KAFKA_URL:?set BABELQUEUE_KAFKA_URL (source the services.env of scripts/services.sh)}
python=${BABELQUEUE_PEER_PYTHON:-$(cat "$repo/build/peer-python.txt" 2>/dev/null || true)}
libs=${BABELQUEUE_KAFKA_LIBS:-}
[[ -x "$cli" ]] || { echo "build the release preset first ($cli missing)" >&2; exit 2; }
[[ -x "$ceiling" ]] || { echo "build kafka_ceiling first ($ceiling missing)" >&2; exit 2; }
[[ -x "$python" ]] || { echo "no Python peer: run scripts/setup-python-peer.sh" >&2; exit 2; }
java_ok=0
if command -v java >/dev/null && [[ -n $libs ]] && ls "$libs"/kafka-tools-*.jar >/dev/null 2>&1; then
  java_ok=1
else
  echo "kafka_rounds: no java or no kafka-tools jar in BABELQUEUE_KAFKA_LIBS: Java rows left out" >&2
fi
bootstrap=${url#kafka://}
bootstrap=${bootstrap%%\?*}
n_single=${N_SINGLE:-3000}
n_batch=${N_BATCH:-50000}
n_pipe=${N_PIPE:-200000}
n_py=${N_PY:-20000}
n_py_settle=${N_PY_SETTLE:-600}
n_py_con=${N_PY_CON:-400}
n_java=${N_JAVA:-200000}
k=${BATCH:-64}
prefix=bq-bench-$$
# shellcheck source=kafka_bench_common.sh
source "$repo/bench/kafka_bench_common.sh"

# bq <bench args> -> "PUB CON CON_STEADY" of one `babelqueue bench` run
bq() {
  local out
  fresh
  out=$(nice "$cli" bench --broker "$url?group=$current" --queue "$current" --size 370 "$@")
  drop
  echo "$(or0 "$(rate publish <<<"$out")") $(or0 "$(rate consume <<<"$out")") $(or0 "$(rate consume-steady <<<"$out")")"
}
# ceil <ceiling args> -> "PUB" (--phase publish)
ceil_pub() {
  local out
  fresh
  out=$(nice "$ceiling" --url "$url" --topic "$current" --size 370 --phase publish "$@")
  drop
  or0 "$(rate publish <<<"$out")"
}
# ceil_both <ceiling args> -> "PUB CON CON_STEADY READ_STEADY": publish, consume (bare loop),
# then the same topic consumed again by a second group with --read 1.
ceil_both() {
  local out out2
  fresh
  out=$(nice "$ceiling" --url "$url" --topic "$current" --group "$current" --size 370 "$@")
  out2=$(nice "$ceiling" --url "$url" --topic "$current" --group "$current-read" --phase consume --read 1 "$@")
  drop
  echo "$(or0 "$(rate publish <<<"$out")") $(or0 "$(rate consume <<<"$out")") $(or0 "$(rate consume-steady <<<"$out")") $(or0 "$(rate consume-steady <<<"$out2")")"
}
# py <args> -> "PUB CON_STEADY"
py() {
  local out
  fresh
  out=$(nice "$python" "$repo/bench/peers/python_kafka_bench.py" --url "$url" --topic "$current" \
    --group "$current" --size 370 "$@")
  drop
  echo "$(or0 "$(rate publish <<<"$out")") $(or0 "$(rate consume-steady <<<"$out")")"
}
# java -> "PUB CON CON_FETCH": ProducerPerformance (acks=all, idempotent, linger.ms as the
# transport's 5) then ConsumerPerformance on the same topic (nMsg.sec and fetch.nMsg.sec, the
# latter without the group join).
java_perf() {
  local out out2
  if [[ $java_ok != 1 ]]; then echo "0 0 0"; return; fi
  fresh
  out=$(nice java -Xmx512m -cp "$libs/*" org.apache.kafka.tools.ProducerPerformance \
    --topic "$current" --num-records "$n_java" --record-size 370 --throughput -1 \
    --producer-props bootstrap.servers="$bootstrap" acks=all enable.idempotence=true linger.ms=5 2>&1)
  out2=$(nice java -Xmx512m -cp "$libs/*" org.apache.kafka.tools.ConsumerPerformance \
    --bootstrap-server "$bootstrap" --topic "$current" --group "$current" --messages "$n_java" \
    --timeout 30000 2>&1)
  drop
  local pub con fetch
  pub=$(sed -nE "s/^$n_java records sent, ([0-9.]+) records\/sec.*/\1/p" <<<"$out" | cut -d. -f1)
  read -r con fetch < <(awk -F', *' '/^[0-9][0-9][0-9][0-9]-/ {printf "%d %d\n", $6, $10}' <<<"$out2")
  echo "$(or0 "$pub") $(or0 "$con") $(or0 "$fetch")"
}

echo "kafka_rounds: $rounds rounds; single $n_single, batched $n_batch (K=$k), pipelined/consumed $n_pipe;" \
  "python $n_py (fire-and-forget), $n_py_settle (awaited), $n_py_con (consume); java $n_java"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
results=$(mktemp)
t_start=$SECONDS
for r in $(seq "$rounds"); do
  # Interleaved: each C++ measurement right beside its ceiling, the peers in between.
  read -r c_s1 _ _ < <(bq --messages "$n_single")
  read -r a_s1 < <(ceil_pub --messages "$n_single")
  read -r p_s1 _ < <(py --messages "$n_py_settle" --mode settle --consume 0)
  read -r c_b1 _ _ < <(bq --messages "$n_batch" --batch "$k")
  read -r a_b1 < <(ceil_pub --messages "$n_batch" --batch "$k")
  read -r p_f1 p_con < <(py --messages "$n_py" --consume "$n_py_con")
  read -r c_p1 c_con c_cons < <(bq --messages "$n_pipe" --batch "$n_pipe")
  read -r a_p1 a_con a_cons a_read < <(ceil_both --messages "$n_pipe" --batch "$n_pipe")
  read -r a_pj < <(ceil_pub --messages "$n_pipe" --batch "$n_pipe" --project 1)
  read -r j_pub j_con j_fetch < <(java_perf)
  read -r c_s4 _ _ < <(bq --messages "$n_single" --publishers 4)
  read -r a_s4 < <(ceil_pub --messages "$n_single" --publishers 4)
  read -r p_s4 _ < <(py --messages "$n_py_settle" --mode settle --publishers 4 --consume 0)
  read -r c_b4 _ _ < <(bq --messages "$n_batch" --batch "$k" --publishers 4)
  read -r a_b4 < <(ceil_pub --messages "$n_batch" --batch "$k" --publishers 4)
  read -r p_f4 _ < <(py --messages "$n_py" --publishers 4 --consume 0)
  line="$r $c_s1 $a_s1 $p_s1 $c_b1 $a_b1 $p_f1 $c_p1 $a_p1 $c_con $a_con $c_cons $a_cons $a_read $p_con"
  line+=" $j_pub $j_con $j_fetch $c_s4 $a_s4 $p_s4 $c_b4 $a_b4 $p_f4 $a_pj"
  echo "round $line (load $(cut -d' ' -f1 /proc/loadavg), $((SECONDS - t_start)) s)" >&2
  zeros=$(tr ' ' '\n' <<<"$line" | grep -cx 0 || true)
  if [[ $java_ok == 1 && $zeros -gt 0 ]] || [[ $java_ok != 1 && $zeros -gt 3 ]]; then
    echo "a measurement failed in round $r" >&2
    exit 1
  fi
  echo "$line" >>"$results"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); $((SECONDS - t_start)) s"

python3 - "$results" "$k" "$java_ok" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
k, java = sys.argv[2], sys.argv[3] == "1"
(R, CS1, AS1, PS1, CB1, AB1, PF1, CP1, AP1, CCON, ACON, CCONS, ACONS, AREAD, PCON,
 JPUB, JCON, JFETCH, CS4, AS4, PS4, CB4, AB4, PF4, APJ) = range(25)
med = lambda f: statistics.median(f(r) for r in rows)
lo = lambda c: min(r[c] for r in rows)
hi = lambda c: max(r[c] for r in rows)
print(f"\nmedians of {len(rows)} rounds (msg/s; ratios are medians of per-round ratios; "
      f"'vs ceiling' bar >= 80 %, 'vs Python' bar >= 5x)")
print(f"{'measurement':44} {'C++':>8} {'ceiling':>8} {'vs ceil':>8} {'Python':>8} {'vs Py':>7}  C++ min-max")
def row(name, c, a, p=None):
    s = f"{name:44} {med(lambda r: r[c]):8.0f} {med(lambda r: r[a]):8.0f} {100 * med(lambda r: r[c] / r[a]):7.0f}%"
    if p is not None:
        s += f" {med(lambda r: r[p]):8.0f} {med(lambda r: r[c] / r[p]):6.1f}x"
    else:
        s += " " * 16
    s += f"  {lo(c):.0f}-{hi(c):.0f}"
    print(s)
row("publish awaited, 1 pub, single (Py settle)", CS1, AS1, PS1)
row(f"publish awaited, 1 pub, batch {k} (Py f&f)", CB1, AB1, PF1)
row("publish pipelined, 1 pub, 1 batch (Py f&f)", CP1, AP1, PF1)
row("  the same vs a loop projecting per record", CP1, APJ)
row("publish awaited, 4 pub, single (Py settle)", CS4, AS4, PS4)
row(f"publish awaited, 4 pub, batch {k} (Py f&f)", CB4, AB4, PF4)
row("consume incl. group join", CCON, ACON)
row("consume steady (from 1st record)", CCONS, ACONS, PCON)
row("consume steady vs ceiling reading headers", CCONS, AREAD)
if java:
    print(f"\nKafka's Java tools (acks=all, idempotent, linger.ms=5, 370-byte records without headers):")
    print(f"  ProducerPerformance {med(lambda r: r[JPUB]):.0f} msg/s; C++ pipelined / it "
          f"{100 * med(lambda r: r[CP1] / r[JPUB]):.0f} %, librdkafka loop / it {100 * med(lambda r: r[AP1] / r[JPUB]):.0f} %")
    print(f"  ConsumerPerformance {med(lambda r: r[JCON]):.0f} msg/s incl. join, {med(lambda r: r[JFETCH]):.0f} msg/s fetch only; "
          f"C++ consume / it {100 * med(lambda r: r[CCON] / r[JCON]):.0f} %, C++ steady / fetch-only "
          f"{100 * med(lambda r: r[CCONS] / r[JFETCH]):.0f} %")
print("\nPython: 'settle' = publish_settle (awaited per record, the job of C++ publish()); 'f&f' ="
      " publish (fire-and-forget) then one flush, the job of one C++ publish_batch of everything;"
      " its consume commits synchronously per record (the SDK has no batched commits).")
PY
rm -f "$results"
