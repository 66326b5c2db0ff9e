#!/usr/bin/env bash
# Measures the SQS bar of the sqs:// issue: `babelqueue bench --broker sqs://...` publishing
# and consuming, single and batched, beside the Python SDK doing the same job
# (bench/peers/python_sqs_bench.py; bar: >= 5x its rate with batching on) against the same
# server in the same run, plus what one HTTP round trip costs there (bench/sqs_roundtrip.cpp:
# plain libcurl unsigned, the transport's signed API layer, SigV4 alone; boto3 through the
# Python peer; the curl CLI with keep-alive). Several interleaved rounds, ratios per round,
# medians and min-max at the end.
#   source /tmp/svc/services.env      # scripts/services.sh start sqs: BABELQUEUE_SQS_URL
#   AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test bash bench/sqs_rounds.sh [rounds]
# (default 3). Needs build/release/cli/babelqueue and build/release/bench/sqs_roundtrip
#   (cmake --preset release && cmake --build build/release --target babelqueue_cli sqs_roundtrip)
# and the Python peer with the sqs extra (babelqueue[sqs] 1.24.0 + boto3;
# $BABELQUEUE_PEER_PYTHON or build/peer-python.txt).
# Environment: N_SINGLE (C++ single publishes, then consumed with receive batch 10),
# N_BATCH (C++ publishes in publish_batch calls of BATCH, then consumed with receive batch 10),
# N_B1 (published in batches, then consumed with receive batch 1: one ReceiveMessage per
# message), N_PY (Python publishes, then consumed), N_DRAIN (sqs_roundtrip --mode drain: the
# consume side at the API layer, ReceiveMessage of 10 + DeleteMessage each vs one
# DeleteMessageBatch), N_RT (round trips per floor measurement),
# BATCH (messages per publish_batch call, default 10 = one SendMessageBatch), NICE (default
# 0: the server runs at nice 0 too). Every measurement gets its own queue, created before it
# (CreateQueue, outside every clock) and deleted after it; each run's publishers and consumers
# resolve the queue URL (GetQueueUrl, once) inside their clock, on both sides. A round in
# which a measurement fails (e.g. the shared server restarted) is reported and left out.
# CPU: the client's (the CLI's user + system time from /usr/bin/time; the Python peer's own
# process_time over its measured phases) and the server's (utime + stime of the pid in
# $BABELQUEUE_SQS_PID, else the sqs.pid beside $BABELQUEUE_SQS_CTL; it also counts whatever
# else the server served meanwhile), per message published and consumed.
# Meant for an emulator (ElasticMQ): the raw libcurl and curl CLI floors send unsigned
# requests to the URL's `endpoint`, which real SQS would refuse.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-3}
cli=${BABELQUEUE_CLI:-$repo/build/release/cli/babelqueue}
rt=${BABELQUEUE_SQS_ROUNDTRIP:-$repo/build/release/bench/sqs_roundtrip}
url=${BABELQUEUE_SQS_URL:?set BABELQUEUE_SQS_URL (e.g. sqs://us-east-1?endpoint=http://127.0.0.1:9324)}
python=${BABELQUEUE_PEER_PYTHON:-$(cat "$repo/build/peer-python.txt" 2>/dev/null || true)}
[[ -x "$cli" ]] || { echo "build the release preset first ($cli missing)" >&2; exit 2; }
[[ -x "$rt" ]] || { echo "build sqs_roundtrip first ($rt missing)" >&2; exit 2; }
[[ -x "$python" ]] || { echo "no Python peer: set BABELQUEUE_PEER_PYTHON" >&2; exit 2; }
: "${AWS_ACCESS_KEY_ID:?set AWS_ACCESS_KEY_ID (any value for ElasticMQ)}"
: "${AWS_SECRET_ACCESS_KEY:?set AWS_SECRET_ACCESS_KEY (any value for ElasticMQ)}"
[[ $url == *endpoint=* ]] || { echo "BABELQUEUE_SQS_URL has no endpoint= (an emulator's)" >&2; exit 2; }
endpoint=${url#*endpoint=}
endpoint=${endpoint%%&*}
[[ $url == *\?* ]] && sep='&' || sep='?'
n_single=${N_SINGLE:-2000}
n_batch=${N_BATCH:-5000}
n_b1=${N_B1:-2000}
n_py=${N_PY:-500}
n_rt=${N_RT:-2000}
n_drain=${N_DRAIN:-3000}
server_pid=${BABELQUEUE_SQS_PID:-}
if [[ -z $server_pid && -n ${BABELQUEUE_SQS_CTL:-} && -r $(dirname "$BABELQUEUE_SQS_CTL")/sqs.pid ]]; then
  server_pid=$(cat "$(dirname "$BABELQUEUE_SQS_CTL")/sqs.pid")
fi
[[ -n $server_pid && -r /proc/$server_pid/stat ]] || server_pid=
tck=$(getconf CLK_TCK)
timef=$(mktemp)
k=${BATCH:-10}
nice_n=${NICE:-0}
prefix=bq-sqsbench-$$
seq_no=0
current=

cleanup() { [[ -n $current ]] && "$rt" --url "$url" --queue "$current" --phase delete >/dev/null 2>&1 || true; }
trap cleanup EXIT
fresh() {
  seq_no=$((seq_no + 1))
  current=$prefix-$seq_no
  "$rt" --url "$url" --queue "$current" --phase create >/dev/null
}
drop() { "$rt" --url "$url" --queue "$current" --phase delete >/dev/null 2>&1 || true; current=; }

# num <regex with one group> : the first match on stdin, else 0 (the round is then rejected)
num() { local v; v=$(sed -nE "s/$1/\1/p" | head -1); [[ -n $v ]] && echo "$v" || echo 0; }
# "RATE P50_US" of the "phase: ... = R msg/s; latency p50 X us ..." line of a run's output
rate_p50() {
  echo "$(num "^$2: .* = ([0-9]+) (msg|calls)\/s.*" <<<"$1") $(num "^$2: .*latency p50 ([0-9.]+) us.*" <<<"$1")"
}

# server CPU ticks so far (-1 when the server's pid is unknown)
server_ticks() { [[ -n $server_pid ]] && awk '{print $14 + $15}' "/proc/$server_pid/stat" 2>/dev/null || echo -1; }
# us_per <seconds> <messages> -> microseconds per message (-1 for an unknown value)
us_per() { awk -v s="$1" -v n="$2" 'BEGIN {if (s < 0) print -1; else printf "%.0f\n", s * 1e6 / n}'; }
# srv_us <ticks before> <ticks after> <messages>
srv_us() { [[ $1 -lt 0 || $2 -lt 0 ]] && echo -1 || us_per "$(awk -v d=$(($2 - $1)) -v t="$tck" 'BEGIN {print d / t}')" "$3"; }

# bq <messages> <query> <bench args> -> "PUB PUB_P50 CON CON_P50 CLIENT_US SERVER_US" of one
# `babelqueue bench` run (CPU per message published and consumed)
bq() {
  local n=$1 query=$2 out s0 s1
  shift 2
  fresh
  s0=$(server_ticks)
  out=$(nice -n "$nice_n" /usr/bin/time -f '%U %S' -o "$timef" "$cli" bench --broker "$url$query" \
    --queue "$current" --size 370 --messages "$n" "$@" 2>&1) || true
  s1=$(server_ticks)
  drop
  echo "$(rate_p50 "$out" publish) $(rate_p50 "$out" consume)" \
    "$(us_per "$(awk '{print $1 + $2}' "$timef")" "$n") $(srv_us "$s0" "$s1" "$n")"
}
# py -> "PUB PUB_P50 CON CON_P50 CLIENT_US SERVER_US" of the Python peer
py() {
  local out s0 s1
  fresh
  s0=$(server_ticks)
  out=$(nice -n "$nice_n" "$python" "$repo/bench/peers/python_sqs_bench.py" --url "$url" \
    --queue "$current" --size 370 --messages "$n_py" 2>&1) || true
  s1=$(server_ticks)
  drop
  echo "$(rate_p50 "$out" publish) $(rate_p50 "$out" consume)" \
    "$(us_per "$(num '^cpu: ([0-9.]+) s.*' <<<"$out")" "$n_py") $(srv_us "$s0" "$s1" "$n_py")"
}
# drain <0|1> -> "RATE P50_US SERVER_US SEND10_P50 RECV10_P50 DELETE_P50" (server CPU per
# message: the fill and the drain; the p50 of one call of each operation; DELETE = one
# DeleteMessage, or one DeleteMessageBatch of 10 with 1)
drain() {
  local out s0 s1
  fresh
  s0=$(server_ticks)
  out=$(nice -n "$nice_n" "$rt" --url "$url" --queue "$current" --mode drain --messages "$n_drain" \
    --delete-batch "$1" 2>&1) || true
  s1=$(server_ticks)
  drop
  echo "$(rate_p50 "$out" drain) $(srv_us "$s0" "$s1" "$n_drain")" \
    "$(num '^op SendMessageBatch-10: .*p50 ([0-9.]+) us.*' <<<"$out")" \
    "$(num '^op ReceiveMessage-10: .*p50 ([0-9.]+) us.*' <<<"$out")" \
    "$(num '^op DeleteMessage[-A-Za-z0-9]*: .*p50 ([0-9.]+) us.*' <<<"$out")"
}
# floor <mode> -> "CALLS_PER_S P50_US"
floor() {
  local out
  out=$(nice -n "$nice_n" "$rt" --url "$url" --queue "$rtq" --mode "$1" --calls "$2" 2>&1) || true
  rate_p50 "$out" "roundtrip $1"
}
floor_boto3() {
  local out
  out=$(nice -n "$nice_n" "$python" "$repo/bench/peers/python_sqs_bench.py" --url "$url" \
    --queue "$rtq" --phase floor --messages "$1" 2>&1) || true
  rate_p50 "$out" "roundtrip boto3"
}
# curl CLI: N GetQueueUrl on one connection (URL globbing reuses it) -> "CALLS_PER_S P50_US"
floor_curl() {
  local n=$1 t0 t1 out
  t0=$(date +%s%N)
  out=$(nice -n "$nice_n" curl -s -o /dev/null -w '%{time_total}\n' -X POST \
    -H 'Content-Type: application/x-amz-json-1.0' -H 'X-Amz-Target: AmazonSQS.GetQueueUrl' \
    -d "{\"QueueName\":\"$rtq\"}" "$endpoint/?n=[1-$n]") || true
  t1=$(date +%s%N)
  sort -n <<<"$out" | awk -v n="$n" -v ns=$((t1 - t0)) \
    'NF {a[++c] = $1} END {if (c == n) printf "%.0f %.1f\n", n / (ns / 1e9), a[int((c + 1) / 2)] * 1e6; else print "0 0"}'
}
load() { cut -d' ' -f1 /proc/loadavg; }

echo "sqs_rounds: $rounds rounds; C++ single $n_single, batched (publish_batch of $k) $n_batch," \
  "receive batch 1 $n_b1; Python $n_py; drain $n_drain; round trips $n_rt; nice $nice_n"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); server pid ${server_pid:-unknown}"
rtq=$prefix-rt
"$rt" --url "$url" --queue "$rtq" --phase create
trap '"$rt" --url "$url" --queue "$rtq" --phase delete >/dev/null 2>&1 || true; cleanup; rm -f "$timef"' EXIT
results=$(mktemp)
t_start=$SECONDS
rejected=0
for r in $(seq "$rounds"); do
  l0=$(load)
  # Interleaved: C++ and Python alternate, the round-trip floors and drains in between.
  read -r c_s c_s50 c_con10a c_con10a50 c_scpu s_scpu < <(bq "$n_single" "${sep}create_queues=true")
  read -r f_raw f_raw50 < <(floor raw "$n_rt")
  read -r p_pub p_pub50 p_con p_con50 p_cpu s_pcpu < <(py)
  read -r f_api f_api50 < <(floor api "$n_rt")
  read -r c_b c_b50 c_con10 c_con1050 c_bcpu s_bcpu < <(bq "$n_batch" "${sep}create_queues=true" --batch "$k")
  read -r d_each d_each50 s_each o_send10 o_recv10 o_del < <(drain 0)
  read -r f_boto f_boto50 < <(floor_boto3 $((n_rt / 4)))
  read -r _ _ c_con1 c_con150 c_1cpu s_1cpu < <(bq "$n_b1" "${sep}create_queues=true&batch=1" --batch "$k")
  read -r d_bat d_bat50 s_bat _ _ o_delb < <(drain 1)
  read -r f_curl f_curl50 < <(floor_curl "$n_rt")
  read -r f_sign f_sign50 < <(floor sign $((n_rt * 10)))
  l1=$(load)
  line="$r $c_s $c_s50 $c_b $c_b50 $c_con10 $c_con1050 $c_con1 $c_con150 $c_con10a $c_con10a50"
  line+=" $p_pub $p_pub50 $p_con $p_con50 $f_raw $f_raw50 $f_api $f_api50 $f_boto $f_boto50"
  line+=" $f_curl $f_curl50 $f_sign $f_sign50 $l0 $l1"
  line+=" $c_scpu $s_scpu $c_bcpu $s_bcpu $c_1cpu $s_1cpu $p_cpu $s_pcpu $d_each $d_each50 $s_each"
  line+=" $d_bat $d_bat50 $s_bat $o_send10 $o_recv10 $o_del $o_delb"
  echo "round $line ($((SECONDS - t_start)) s)" >&2
  zeros=$(tr ' ' '\n' <<<"$line" | grep -cxE '0|0\.0' || true)
  if [[ $zeros -gt 0 ]]; then
    echo "a measurement failed in round $r: round left out" >&2
    rejected=$((rejected + 1))
    continue
  fi
  echo "$line" >>"$results"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); $((SECONDS - t_start)) s;" \
  "$rejected round(s) left out"
[[ -s $results ]] || { echo "no complete round" >&2; exit 1; }

python3 - "$results" "$k" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
k = sys.argv[2]
(R, CS, CS50, CB, CB50, CC10, CC1050, CC1, CC150, CC10A, CC10A50, PP, PP50, PC, PC50,
 FRAW, FRAW50, FAPI, FAPI50, FBOTO, FBOTO50, FCURL, FCURL50, FSIGN, FSIGN50, L0, L1,
 CPU_S, SRV_S, CPU_B, SRV_B, CPU_1, SRV_1, CPU_P, SRV_P, DE, DE50, SRV_DE, DB, DB50, SRV_DB,
 OSEND10, ORECV10, ODEL, ODELB) = range(45)
med = lambda f: statistics.median(f(r) for r in rows)
mm = lambda f: f"{min(f(r) for r in rows):.0f}-{max(f(r) for r in rows):.0f}"
mm1 = lambda f: f"{min(f(r) for r in rows):.1f}-{max(f(r) for r in rows):.1f}"
print("\nper round: load average before/after: " +
      ", ".join(f"round {int(r[R])} {r[L0]:.1f}/{r[L1]:.1f}" for r in rows))
print(f"\nmedians of {len(rows)} rounds (msg/s; p50 = median of the runs' per-call p50; "
      f"'vs Py' = median of per-round ratios, bar >= 5x with batching on)")
print(f"{'measurement':58} {'msg/s':>7} {'min-max':>12} {'p50 us':>8} {'vs Py':>7} {'min-max':>10}")
def row(name, c, c50, p=None):
    s = f"{name:58} {med(lambda r: r[c]):7.0f} {mm(lambda r: r[c]):>12} {med(lambda r: r[c50]):8.0f}"
    if p is not None:
        s += f" {med(lambda r: r[c] / r[p]):6.1f}x {mm1(lambda r: r[c] / r[p]):>10}"
    print(s)
row("C++ publish, single (1 SendMessage per msg)", CS, CS50, PP)
row(f"C++ publish_batch of {k} (1 SendMessageBatch per {k} msgs)", CB, CB50, PP)
row("C++ consume, receive batch 10 (+1 DeleteMessage per msg)", CC10, CC1050, PC)
row("  the same, the single-publish run's queue", CC10A, CC10A50, PC)
row("C++ consume, receive batch 1 (Receive + Delete per msg)", CC1, CC150, PC)
row("Python publish (SendMessage per msg; no batch API)", PP, PP50)
row("Python consume (Receive of 1 + Delete per msg)", PC, PC50)
row("API-layer drain: Receive of 10 + DeleteMessage each", DE, DE50, PC)
row("API-layer drain: Receive of 10 + DeleteMessageBatch", DB, DB50, PC)
print(f"\nCPU per message (published once + consumed once; us; medians, min-max):")
print(f"{'run':58} {'client':>7} {'min-max':>12} {'server':>8} {'min-max':>12} {'wall':>7}")
def cpu(name, c, s, wall):
    sv = med(lambda r: r[s])
    srv = f"{sv:8.0f} {mm(lambda r: r[s]):>12}" if sv >= 0 else f"{'n/a':>8} {'':>12}"
    cl = f"{med(lambda r: r[c]):7.0f} {mm(lambda r: r[c]):>12}" if c is not None else f"{'':>7} {'':>12}"
    print(f"{name:58} {cl} {srv} {med(wall):7.0f}")
cpu("C++ single publish + consume batch 10", CPU_S, SRV_S, lambda r: 1e6 / r[CS] + 1e6 / r[CC10A])
cpu(f"C++ publish_batch of {k} + consume batch 10", CPU_B, SRV_B, lambda r: 1e6 / r[CB] + 1e6 / r[CC10])
cpu(f"C++ publish_batch of {k} + consume batch 1", CPU_1, SRV_1, lambda r: 1e6 / r[CB] + 1e6 / r[CC1])
cpu("Python publish + consume", CPU_P, SRV_P, lambda r: 1e6 / r[PP] + 1e6 / r[PC])
cpu("API-layer fill (SendMessageBatch) + drain, DeleteMessage each", None, SRV_DE, lambda r: 1e6 / r[DE])
cpu("API-layer fill (SendMessageBatch) + drain, DeleteMessageBatch", None, SRV_DB, lambda r: 1e6 / r[DB])
print("(wall: us per message of the two phases' rates; for the drains the drain alone)")
print(f"\nround trips (GetQueueUrl, one at a time, keep-alive): calls/s, p50 us")
for name, c, c50 in (("plain libcurl, unsigned (bench/sqs_roundtrip raw)", FRAW, FRAW50),
                     ("curl CLI, unsigned, URL glob on one connection", FCURL, FCURL50),
                     ("transport API layer, signed (sqs_roundtrip api)", FAPI, FAPI50),
                     ("boto3 (the Python SDK's client)", FBOTO, FBOTO50)):
    print(f"  {name:56} {med(lambda r: r[c]):7.0f} {mm(lambda r: r[c]):>12} {med(lambda r: r[c50]):8.0f}")
print(f"  SigV4 signing alone (no I/O): {med(lambda r: r[FSIGN]):.0f} signatures/s, "
      f"p50 {med(lambda r: r[FSIGN50]):.1f} us")
print(f"\none HTTP round trip per SQS operation (p50 of one call, us; medians, min-max):")
for name, c in (("GetQueueUrl, C++ API layer (the floor)", FAPI50),
                ("SendMessage, C++ publish()", CS50),
                ("SendMessageBatch of 10, C++ publish_batch()", CB50),
                ("SendMessageBatch of 10, API layer (drain fill)", OSEND10),
                ("ReceiveMessage of 10, API layer", ORECV10),
                ("DeleteMessage, API layer", ODEL),
                ("DeleteMessageBatch of 10, API layer", ODELB),
                ("GetQueueUrl, boto3", FBOTO50),
                ("SendMessage, Python SqsTransport.publish (boto3)", PP50)):
    print(f"  {name:56} {med(lambda r: r[c]):8.0f} {mm(lambda r: r[c]):>12}")
print("round trips per message: C++ publish 1, publish_batch of 10: 0.1, consume batch 10: 0.1 "
      "ReceiveMessage + 1 DeleteMessage = 1.1, batch 1: 2, with DeleteMessageBatch: 0.2; Python "
      "publish 1, consume 2")
print(f"C++ consume batch 10: DeleteMessage p50 x 1 + ReceiveMessage(10) p50 / 10 = "
      f"{med(lambda r: r[ODEL] + r[ORECV10] / 10):.0f} us per message, measured "
      f"{med(lambda r: 1e6 / r[CC10]):.0f} us mean; the deletes' share "
      f"{100 * med(lambda r: r[ODEL] / (r[ODEL] + r[ORECV10] / 10)):.0f} %")
PY
rm -f "$results"
