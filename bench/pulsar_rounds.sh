#!/usr/bin/env bash
# Measures the Pulsar bars of the pulsar:// issue: `babelqueue bench --broker pulsar://...`
# publishing (single and batched) and consuming beside, in the same run, (a) a plain loop on
# the same Apache Pulsar C++ client with the same settings (bench/pulsar_ceiling.cpp, the
# ceiling of this client library; bar >= 80 %), (b) the Python SDK doing the same job
# (bench/peers/python_pulsar_bench.py; bar >= 5x) and (c) Pulsar's own pulsar-perf
# (PerformanceProducer / PerformanceConsumer, the Java client) when its jars are there.
# Several interleaved rounds, ratios per round, medians and min-max at the end.
#   source /tmp/svc/services.env   # scripts/services.sh start pulsar: BABELQUEUE_PULSAR_URL,
#                                  # BABELQUEUE_PULSAR_ADMIN_URL, BABELQUEUE_PULSAR_CTL
#   bash bench/pulsar_rounds.sh [rounds]   (default 3)
# Needs cli/babelqueue and bench/pulsar_ceiling of a release build with the pulsar component
# (BUILD, default build/release):
#   CMAKE_PREFIX_PATH=<pulsar client prefix> cmake --preset release -B build/release
#   ninja -C build/release babelqueue_cli pulsar_ceiling
# and the Python peer with the pulsar extra (babelqueue[pulsar] 1.24.0; $BABELQUEUE_PEER_PYTHON
# or build/peer-python.txt).
# pulsar-perf: the jars of bench/pulsar-perf/pom.xml (org.apache.pulsar:pulsar-testclient) in
# $BABELQUEUE_PULSAR_PERF_LIBS, else ${BABELQUEUE_CACHE_DIR:-~/.cache/babelqueue}/
# pulsar-perf-<sha256 of the pom>/libs, fetched there once with Maven when PULSAR_PERF_FETCH=1.
# Without java or those jars the pulsar-perf rows are left out (said so at the start).
# Environment: N_SINGLE (awaited single publishes, then consumed), N_BATCH (publishes in
# publish_batch calls of BATCH, then consumed: the consume rows; the ceiling's topic is then
# consumed again with --read 1), N_PIPE (one publish_batch of all N_PIPE: a publish row),
# N_PY (Python publishes, then consumed), N_PY_CON (Python consume of a topic the ceiling
# filled beforehand: its consume row), N_PERF (pulsar-perf messages), BATCH (K, default 100),
# NICE (default 10, the broker's own nice level). Which of a C++ run and its ceiling goes
# first alternates from round to round.
# Every measurement gets its own topic with its subscription `babelqueue` (and `read`, for
# the ceiling's --read pass) made before it (pulsar_ceiling --phase create, outside every
# clock) and deleted after it (the admin REST API), so no run times the topic's creation and
# nothing published is discarded for want of a subscription.
# CPU per message (published once + consumed once): the client's (the CLI's and the ceiling's
# user + system time from /usr/bin/time, start-up included; the Python peer's process_time
# over its measured phases) and the broker's (utime + stime of the pid from
# $BABELQUEUE_PULSAR_CTL pid; it also counts whatever else the broker served meanwhile).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-3}
build=${BUILD:-$repo/build/release}
cli=${BABELQUEUE_CLI:-$build/cli/babelqueue}
ceiling=${BABELQUEUE_CEILING:-$build/bench/pulsar_ceiling}
url=${BABELQUEUE_PULSAR_URL:?set BABELQUEUE_PULSAR_URL (source the services.env of scripts/services.sh)}
admin=${BABELQUEUE_PULSAR_ADMIN_URL:?set BABELQUEUE_PULSAR_ADMIN_URL}
python=${BABELQUEUE_PEER_PYTHON:-$(cat "$repo/build/peer-python.txt" 2>/dev/null || true)}
[[ -x "$cli" ]] || { echo "build the release preset first ($cli missing)" >&2; exit 2; }
[[ -x "$ceiling" ]] || { echo "build pulsar_ceiling first ($ceiling missing)" >&2; exit 2; }
[[ -x "$python" ]] || { echo "no Python peer: run scripts/setup-python-peer.sh" >&2; exit 2; }
n_single=${N_SINGLE:-2000}
n_batch=${N_BATCH:-100000}
n_pipe=${N_PIPE:-50000}
n_py=${N_PY:-1000}
n_py_con=${N_PY_CON:-20000}
n_perf=${N_PERF:-50000}
k=${BATCH:-100}
nice_n=${NICE:-10}
[[ $url == *\?* ]] && sep='&' || sep='?'

# pulsar-perf (optional)
perf_pom=$repo/bench/pulsar-perf/pom.xml
perf_libs=${BABELQUEUE_PULSAR_PERF_LIBS:-${BABELQUEUE_CACHE_DIR:-$HOME/.cache/babelqueue}/pulsar-perf-$(sha256sum "$perf_pom" | cut -c1-16)/libs}
if [[ ${PULSAR_PERF_FETCH:-0} == 1 && ! -d $perf_libs ]] && command -v mvn >/dev/null; then
  d=$(dirname "$perf_libs")
  mkdir -p "$d" && cp "$perf_pom" "$d/pom.xml"
  (cd "$d" && timeout 900 mvn -B -q dependency:copy-dependencies -DoutputDirectory=libs.tmp \
    -DincludeScope=runtime >mvn.log 2>&1 && mv libs.tmp libs) ||
    echo "pulsar_rounds: fetching pulsar-testclient failed (see $d/mvn.log)" >&2
fi
perf_ok=0
if command -v java >/dev/null && ls "$perf_libs"/pulsar-testclient-*.jar >/dev/null 2>&1; then
  perf_ok=1
else
  echo "pulsar_rounds: no java or no pulsar-testclient jar in $perf_libs: pulsar-perf rows left out" >&2
fi
host_port=${url#pulsar://}
host_port=${host_port%%\?*}

server_pid=${BABELQUEUE_PULSAR_PID:-}
if [[ -z $server_pid && -n ${BABELQUEUE_PULSAR_CTL:-} ]]; then
  server_pid=$("$BABELQUEUE_PULSAR_CTL" pid 2>/dev/null || true)
fi
[[ -n $server_pid && -r /proc/$server_pid/stat ]] || server_pid=
tck=$(getconf CLK_TCK)
timef=$(mktemp)
prefix=bq-pbench-$$
current=

drop_topic() {
  curl -s -o /dev/null -X DELETE "$admin/admin/v2/persistent/public/default/$1?force=true" || true
}
# cleanup: every topic of this run still there (the measurements run in subshells, so the
# parent never knows the current one; an interrupted run leaves one behind otherwise)
cleanup() {
  curl -s "$admin/admin/v2/persistent/public/default" 2>/dev/null | grep -oE "$prefix-[0-9]+" |
    sort -u | while read -r t; do drop_topic "$t"; done
  rm -f "$timef"
}
trap cleanup EXIT
# fresh: a new topic with its subscriptions `babelqueue` and `read`
fresh() {
  current=$prefix-$(date +%s%N)  # (callers run in subshells: no counter survives them)
  "$ceiling" --url "$url" --queue "$current" --phase create
  "$ceiling" --url "$url${sep}subscription=read" --queue "$current" --phase create
}
drop() { drop_topic "$current"; current=; }

# num <regex with one group> : the first match on stdin, else 0 (the round is then rejected)
num() { local v; v=$(sed -nE "s/$1/\1/p" | head -1); [[ -n $v ]] && echo "$v" || echo 0; }
rate() { num "^$1: .* = ([0-9]+) msg\/s.*"; }
p50() { num "^$1: .*latency p50 ([0-9.]+) us.*"; }
server_ticks() { [[ -n $server_pid ]] && awk '{print $14 + $15}' "/proc/$server_pid/stat" 2>/dev/null || echo -1; }
# us_per <seconds> <messages> -> microseconds per message (-1 for an unknown value)
us_per() { awk -v s="$1" -v n="$2" 'BEGIN {if (s < 0) print -1; else printf "%.1f\n", s * 1e6 / n}'; }
srv_us() { [[ $1 -lt 0 || $2 -lt 0 ]] && echo -1 || us_per "$(awk -v d=$(($2 - $1)) -v t="$tck" 'BEGIN {print d / t}')" "$3"; }
client_us() { us_per "$(awk '{print $1 + $2}' "$timef")" "$1"; }

# bq <messages> <bench args> -> "PUB PUB_P50 CON CON_STEADY CLIENT_US SERVER_US FIRST_MS" of
# one `babelqueue bench` run (FIRST_MS: when its consume phase got its first message)
bq() {
  local n=$1 out s0 s1
  shift
  fresh
  s0=$(server_ticks)
  out=$(nice -n "$nice_n" /usr/bin/time -f '%U %S' -o "$timef" "$cli" bench --broker "$url" \
    --queue "$current" --size 370 --messages "$n" "$@" 2>&1) || true
  s1=$(server_ticks)
  drop
  echo "$(rate publish <<<"$out") $(p50 publish <<<"$out") $(rate consume <<<"$out")" \
    "$(rate consume-steady <<<"$out") $(client_us "$n") $(srv_us "$s0" "$s1" "$n") $(first_ms "$out")"
}
# first_ms <output> -> ms to the first message of the "consume-steady: first message after S s"
first_ms() { awk '/^consume-steady: first message after/ {printf "%.1f\n", $5 * 1000; f = 1} END {if (!f) print 0}' <<<"$1"; }
# ceil <messages> <ceiling args> -> "PUB PUB_P50 PUB_STEADY CON CON_STEADY CLIENT_US SERVER_US
# [READ_CON READ_CON_STEADY]"; with READ=1 the topic is then consumed again (subscription
# `read`) with --read 1, and its two rates follow. (The topic is made and dropped inside: the
# caller reads the result through a pipe, i.e. in a subshell.)
ceil() {
  local n=$1 out out2 s0 s1 extra=
  shift
  fresh
  s0=$(server_ticks)
  out=$(nice -n "$nice_n" /usr/bin/time -f '%U %S' -o "$timef" "$ceiling" --url "$url" \
    --queue "$current" --size 370 --messages "$n" "$@" 2>&1) || true
  s1=$(server_ticks)
  if [[ ${READ:-0} == 1 ]]; then
    out2=$(nice -n "$nice_n" "$ceiling" --url "$url${sep}subscription=read" --queue "$current" \
      --messages "$n" --phase consume --read 1 2>&1) || true
    extra=" $(rate consume <<<"$out2") $(rate consume-steady <<<"$out2")"
  fi
  drop
  echo "$(rate publish <<<"$out") $(p50 publish <<<"$out") $(rate publish-steady <<<"$out")" \
    "$(rate consume <<<"$out") $(rate consume-steady <<<"$out") $(client_us "$n") $(srv_us "$s0" "$s1" "$n")$extra"
}
# py -> "PUB PUB_P50 CON CON_STEADY CLIENT_US SERVER_US" of the Python peer
py() {
  local out s0 s1
  fresh
  s0=$(server_ticks)
  out=$(nice -n "$nice_n" "$python" "$repo/bench/peers/python_pulsar_bench.py" --url "$url" \
    --queue "$current" --size 370 --messages "$n_py" 2>&1) || true
  s1=$(server_ticks)
  drop
  echo "$(rate publish <<<"$out") $(p50 publish <<<"$out") $(rate consume <<<"$out")" \
    "$(rate consume-steady <<<"$out") $(us_per "$(num '^cpu: ([0-9.]+) s.*' <<<"$out")" "$n_py")" \
    "$(srv_us "$s0" "$s1" "$n_py")"
}
# py_con -> "CON CON_STEADY CLIENT_US SERVER_US" of the Python peer consuming N_PY_CON messages
# the ceiling published beforehand (outside the clocks): the Python publish is too slow to
# fill a topic worth a steady consume rate
py_con() {
  local out s0 s1
  fresh
  "$ceiling" --url "$url" --queue "$current" --size 370 --messages "$n_py_con" --batch "$n_py_con" \
    --phase publish >/dev/null
  s0=$(server_ticks)
  out=$(nice -n "$nice_n" "$python" "$repo/bench/peers/python_pulsar_bench.py" --url "$url" \
    --queue "$current" --size 370 --messages 0 --consume "$n_py_con" 2>&1) || true
  s1=$(server_ticks)
  drop
  echo "$(rate consume <<<"$out") $(rate consume-steady <<<"$out")" \
    "$(us_per "$(num '^cpu: ([0-9.]+) s.*' <<<"$out")" "$n_py_con") $(srv_us "$s0" "$s1" "$n_py_con")"
}
# perf -> "PUB CON" of pulsar-perf: PerformanceProducer (N_PERF 370-byte messages, batching
# on, max 1000 per batch, 10 ms delay, no rate limit) then PerformanceConsumer on the same
# subscription (Shared, receiver queue 1000), their "Aggregated throughput" lines. NEVER RUN
# YET: the jars could not be fetched here (docs/benchmarks-pulsar.md); the options and the
# parsed line are from pulsar-perf's documentation, check them on the first run.
perf() {
  local out out2 pub con
  if [[ $perf_ok != 1 ]]; then echo "-1 -1"; return; fi
  fresh
  out=$(nice -n "$nice_n" java -Xmx256m -cp "$perf_libs/*" org.apache.pulsar.testclient.PerformanceProducer \
    --service-url "pulsar://$host_port" -m "$n_perf" -s 370 -r 0 -bm 1000 -b 10 -time 0 \
    "persistent://public/default/$current" 2>&1) || true
  out2=$(nice -n "$nice_n" java -Xmx256m -cp "$perf_libs/*" org.apache.pulsar.testclient.PerformanceConsumer \
    --service-url "pulsar://$host_port" -ss babelqueue -st Shared -q 1000 -m "$n_perf" \
    "persistent://public/default/$current" 2>&1) || true
  drop
  pub=$(num '.*Aggregated throughput stats.* ([0-9]+)[.0-9]* msg\/s.*' <<<"$out")
  con=$(num '.*Aggregated throughput stats.* ([0-9]+)[.0-9]* msg\/s.*' <<<"$out2")
  echo "$pub $con"
}
load() { cut -d' ' -f1 /proc/loadavg; }

echo "pulsar_rounds: $rounds rounds; single $n_single, batched $n_batch (K=$k, then consumed)," \
  "pipelined $n_pipe; python $n_py (+ consume $n_py_con); pulsar-perf $n_perf (on: $perf_ok); nice $nice_n"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); broker pid ${server_pid:-unknown}"
results=$(mktemp)
t_start=$SECONDS
rejected=0
for r in $(seq "$rounds"); do
  l0=$(load)
  # Interleaved: each C++ measurement right beside its ceiling (which of the two runs first
  # alternates from round to round), the peers in between.
  if ((r % 2)); then
    read -r c_s c_s50 _ _ c_scpu s_scpu _ < <(bq "$n_single")
    read -r a_s a_s50 a_ss _ _ a_scpu sa_scpu < <(ceil "$n_single")
  else
    read -r a_s a_s50 a_ss _ _ a_scpu sa_scpu < <(ceil "$n_single")
    read -r c_s c_s50 _ _ c_scpu s_scpu _ < <(bq "$n_single")
  fi
  read -r p_pub p_pub50 _ _ p_cpu s_pcpu < <(py)
  if ((r % 2)); then
    read -r c_b c_b50 c_con c_cons c_bcpu s_bcpu c_first < <(bq "$n_batch" --batch "$k")
    read -r a_b a_b50 a_bs a_con a_cons a_bcpu sa_bcpu a_read a_reads < <(READ=1 ceil "$n_batch" --batch "$k")
  else
    read -r a_b a_b50 a_bs a_con a_cons a_bcpu sa_bcpu a_read a_reads < <(READ=1 ceil "$n_batch" --batch "$k")
    read -r c_b c_b50 c_con c_cons c_bcpu s_bcpu c_first < <(bq "$n_batch" --batch "$k")
  fi
  read -r p_con p_cons p_ccpu s_pccpu < <(py_con)
  if ((r % 2)); then
    read -r c_p _ _ _ _ _ c_pfirst < <(bq "$n_pipe" --batch "$n_pipe")
    read -r a_p _ a_ps _ _ _ _ < <(ceil "$n_pipe" --batch "$n_pipe" --phase publish)
  else
    read -r a_p _ a_ps _ _ _ _ < <(ceil "$n_pipe" --batch "$n_pipe" --phase publish)
    read -r c_p _ _ _ _ _ c_pfirst < <(bq "$n_pipe" --batch "$n_pipe")
  fi
  read -r a_pj _ _ _ _ _ _ < <(ceil "$n_pipe" --batch "$n_pipe" --project 1 --phase publish)
  read -r a_pb _ _ _ _ _ _ < <(ceil "$n_pipe" --batch "$n_pipe" --project 1 --prebuild 1 --phase publish)
  read -r f_pub f_con < <(perf)
  l1=$(load)
  line="$r $c_s $c_s50 $a_s $a_s50 $a_ss $c_b $c_b50 $a_b $a_b50 $a_bs $c_p $a_p $a_ps $a_pj"
  line+=" $c_con $c_cons $a_con $a_cons $a_read $a_reads $p_pub $p_pub50 $p_con $p_cons"
  line+=" $f_pub $f_con $c_scpu $s_scpu $a_scpu $sa_scpu $c_bcpu $s_bcpu $a_bcpu $sa_bcpu"
  line+=" $p_cpu $s_pcpu $p_ccpu $s_pccpu $c_first $c_pfirst $a_pb $l0 $l1"
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

python3 - "$results" "$k" "$perf_ok" "$n_pipe" "$n_batch" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
k, perf, n_pipe, n_batch = sys.argv[2], sys.argv[3] == "1", sys.argv[4], sys.argv[5]
(R, CS, CS50, AS, AS50, ASS, CB, CB50, AB, AB50, ABS, CP, AP, APS, APJ,
 CCON, CCONS, ACON, ACONS, AREAD, AREADS, PPUB, PPUB50, PCON, PCONS,
 FPUB, FCON, CPU_CS, SRV_CS, CPU_AS, SRV_AS, CPU_CB, SRV_CB, CPU_AB, SRV_AB,
 CPU_P, SRV_P, CPU_PC, SRV_PC, CFIRST, CPFIRST, APB, L0, L1) = range(44)
med = lambda f: statistics.median(f(r) for r in rows)
mm = lambda f: f"{min(f(r) for r in rows):.0f}-{max(f(r) for r in rows):.0f}"
pct = lambda f: f"{100 * min(f(r) for r in rows):.0f}-{100 * max(f(r) for r in rows):.0f}%"
x = lambda f: f"{min(f(r) for r in rows):.1f}-{max(f(r) for r in rows):.1f}x"
print("\nper round: load average before/after: " +
      ", ".join(f"round {int(r[R])} {r[L0]:.1f}/{r[L1]:.1f}" for r in rows))
print(f"\nmedians of {len(rows)} rounds (msg/s; ratios are medians of per-round ratios, min-max; "
      f"'vs ceiling' bar >= 80 %, 'vs Python' bar >= 5x)")
print(f"{'measurement':46} {'C++':>7} {'ceiling':>8} {'vs ceiling':>16} {'Python':>7} {'vs Python':>17}  C++ min-max")
def row(name, c, a, p=None):
    s = f"{name:46} {med(lambda r: r[c]):7.0f} {med(lambda r: r[a]):8.0f} "
    s += f"{100 * med(lambda r: r[c] / r[a]):4.0f}% {pct(lambda r: r[c] / r[a]):>10}"
    if p is not None:
        s += f" {med(lambda r: r[p]):7.0f} {med(lambda r: r[c] / r[p]):5.1f}x {x(lambda r: r[c] / r[p]):>11}"
    else:
        s += " " * 30
    print(s + f"  {mm(lambda r: r[c])}")
row("publish, single (awaited each)", CS, AS, PPUB)
row("  the same vs the ceiling's steady rate", CS, ASS)
row(f"publish_batch of {k} (Py: single)", CB, AB, PPUB)
row("  the same vs the ceiling's steady rate", CB, ABS)
row(f"publish_batch of all {n_pipe} (Py: single)", CP, AP, PPUB)
row("  the same vs the ceiling's steady rate", CP, APS)
row("  the same vs a loop projecting per message", CP, APJ)
row("  the same vs that loop building all first", CP, APB)
row(f"consume {n_batch} (receive+ack), incl. subscribe", CCON, ACON, PCON)
row("consume steady (from the 1st message)", CCONS, ACONS, PCONS)
row("  the same vs a loop reading payload+props", CCONS, AREADS)
print(f"\np50 per call, us: C++ publish {med(lambda r: r[CS50]):.0f}, ceiling send "
      f"{med(lambda r: r[AS50]):.0f}, Python publish {med(lambda r: r[PPUB50]):.0f}; "
      f"publish_batch of {k}: C++ {med(lambda r: r[CB50]):.0f}, ceiling {med(lambda r: r[AB50]):.0f}")
print(f"C++ consume phase, first message after (ms; median, min-max): after the batches of {k} "
      f"{med(lambda r: r[CFIRST]):.0f} ({mm(lambda r: r[CFIRST])}), after the publish_batch of all "
      f"{n_pipe} {med(lambda r: r[CPFIRST]):.0f} ({mm(lambda r: r[CPFIRST])})")
if perf:
    print(f"\npulsar-perf (Java client, batching on, 370-byte messages without properties):")
    print(f"  PerformanceProducer {med(lambda r: r[FPUB]):.0f} msg/s ({mm(lambda r: r[FPUB])}); C++ pipelined "
          f"/ it {100 * med(lambda r: r[CP] / r[FPUB]):.0f} %, the plain loop / it {100 * med(lambda r: r[AP] / r[FPUB]):.0f} %")
    print(f"  PerformanceConsumer {med(lambda r: r[FCON]):.0f} msg/s ({mm(lambda r: r[FCON])}); C++ consume / it "
          f"{100 * med(lambda r: r[CCON] / r[FCON]):.0f} %, the plain loop / it {100 * med(lambda r: r[ACON] / r[FCON]):.0f} %")
print(f"\nCPU per message, published once + consumed once (us; medians, min-max):")
print(f"{'run':52} {'client':>7} {'min-max':>10} {'broker':>7} {'min-max':>10}")
def cpu(name, c, s):
    sv = med(lambda r: r[s])
    srv = f"{sv:7.1f} {mm(lambda r: r[s]):>10}" if sv >= 0 else f"{'n/a':>7}"
    print(f"{name:52} {med(lambda r: r[c]):7.1f} {mm(lambda r: r[c]):>10} {srv}")
cpu("C++ single publish + consume", CPU_CS, SRV_CS)
cpu("ceiling single send + consume", CPU_AS, SRV_AS)
cpu(f"C++ publish_batch of {k} + consume", CPU_CB, SRV_CB)
cpu(f"ceiling batches of {k} + consume", CPU_AB, SRV_AB)
cpu("Python single publish + consume", CPU_P, SRV_P)
cpu("Python consume only (a topic the ceiling filled)", CPU_PC, SRV_PC)
print("(client: the whole process, start-up included, except Python: its measured phases only;"
      " broker: the filled topic's consume only)")
PY
rm -f "$results"
