#!/usr/bin/env bash
# Measures the Artemis bars of the AMQP 1.0 issue: `babelqueue bench --broker artemis://...`
# beside, in the same run, (a) a plain Qpid Proton C++ loop with the same settlement and
# credit (bench/artemis_ceiling.cpp, the ceiling of this client library; bar >= 80 %) and
# (b) the Python SDK doing the same job (bench/peers/python_artemis_bench.py; bar >= 5x),
# several interleaved rounds, ratios per round, medians at the end. Also the ceiling across a
# thread hop (--hop 1: the threading of the transport's first versions, which ran Proton on a
# thread of its own, without its other work: what a hop costs), the same with
# settlements handed over without waiting (--async-ack 1: those versions' later ack()), the ceiling
# projecting each message and reading each received one (--project 1 --read 1: the transport's
# per-message work without the hop) and awaited non-durable publishes (--durable 0: what the
# broker's journal costs; the Python SDK sends non-durable messages).
#   BABELQUEUE_ARTEMIS_URL=artemis://admin:admin@127.0.0.1:6172 bash bench/artemis_rounds.sh [rounds]
# (default 3; or source the services.env of scripts/services.sh). Needs
# build/release/cli/babelqueue and build/release/bench/artemis_ceiling
#   (cmake --preset release && cmake --build build/release --target babelqueue_cli artemis_ceiling)
# and the Python peer with the artemis extra (scripts/setup-python-peer.sh; $BABELQUEUE_PEER_PYTHON
# or build/peer-python.txt). The Python SDK attaches bare links: the broker needs ANYCAST
# default routing (scripts/services.sh configures it).
# Environment: N_SINGLE (awaited single publishes, then consumed), N_BATCH (publishes in
# batches of BATCH, then consumed: the consume rows), N_PY (Python publishes and consumes),
# BATCH (K, default 64), PREFETCH (the consumers' credit, default 64), QUERY (more URL query
# keys, e.g. "&idle_timeout=0"; "&durable=false" makes the CLI and every ceiling row send
# non-durable messages, as the Python SDK does). Every measurement uses its own fresh queue,
# drained by its own consume phase (Artemis then deletes the auto-created queue). All
# processes run under `nice` (NICE, default 10): the broker, the clients and the Python peer
# share the machine's cores — run it on a quiet machine for absolute figures.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-3}
cli=${BABELQUEUE_CLI:-$repo/build/release/cli/babelqueue}
ceiling=${BABELQUEUE_CEILING:-$repo/build/release/bench/artemis_ceiling}
url=${BABELQUEUE_ARTEMIS_URL:?set BABELQUEUE_ARTEMIS_URL (e.g. artemis://admin:admin@127.0.0.1:5672)}
python=${BABELQUEUE_PEER_PYTHON:-$(cat "$repo/build/peer-python.txt" 2>/dev/null || true)}
[[ -x "$cli" ]] || { echo "build the release preset first ($cli missing)" >&2; exit 2; }
[[ -x "$ceiling" ]] || { echo "build artemis_ceiling first ($ceiling missing)" >&2; exit 2; }
[[ -x "$python" ]] || { echo "no Python peer: run scripts/setup-python-peer.sh" >&2; exit 2; }
n_single=${N_SINGLE:-2000}
n_batch=${N_BATCH:-20000}
n_py=${N_PY:-400}
k=${BATCH:-64}
prefetch=${PREFETCH:-64}
query="?prefetch=$prefetch${QUERY:-}"
nice_n=${NICE:-10}
prefix=bq-bench-$$
seq_no=0

fresh_queue() { seq_no=$((seq_no + 1)); echo "$prefix-$seq_no"; }
# rate <phase> : msgs/s of "phase: ... = R msg/s" on stdin
rate() { sed -nE "s/^$1: .* = ([0-9]+) msg\/s.*/\1/p" | head -1; }
# or0: the value, or 0 when a measurement printed nothing (the round is then rejected)
or0() { [[ -n $1 ]] && echo "$1" || echo 0; }
# triple: "PUB CON CON_STEADY" of a run's output
triple() { echo "$(or0 "$(rate publish <<<"$1")") $(or0 "$(rate consume <<<"$1")") $(or0 "$(rate consume-steady <<<"$1")")"; }

# bq <bench args> -> "PUB CON CON_STEADY" of one `babelqueue bench` run
bq() {
  local out
  out=$(nice -n "$nice_n" "$cli" bench --broker "$url$query" --queue "$(fresh_queue)" --size 370 "$@") || true
  triple "$out"
}
# ceil <ceiling args> -> "PUB CON CON_STEADY"
ceil() {
  local out
  out=$(nice -n "$nice_n" "$ceiling" --url "$url$query" --queue "$(fresh_queue)" --size 370 "$@") || true
  triple "$out"
}
# py <peer args> -> "PUB CON CON_STEADY"
py() {
  local out
  out=$(nice -n "$nice_n" "$python" "$repo/bench/peers/python_artemis_bench.py" --url "$url" \
    --queue "$(fresh_queue)" --size 370 --messages "$n_py" "$@") || true
  triple "$out"
}
load() { cut -d' ' -f1 /proc/loadavg; }

echo "artemis_rounds: $rounds rounds; awaited single $n_single, batched (K=$k) and consumed" \
  "$n_batch, prefetch $prefetch; python $n_py (credit 1 and $prefetch)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
results=$(mktemp)
t_start=$SECONDS
for r in $(seq "$rounds"); do
  l0=$(load)
  # Interleaved: each C++ measurement right beside its ceiling, Python in between.
  read -r c_s cs_con _ < <(bq --messages "$n_single")
  read -r a_s as_con _ < <(ceil --messages "$n_single")
  read -r h_s _ _ < <(ceil --messages "$n_single" --hop 1)
  read -r p_pub1 p_con1 p_cons1 < <(py --credit 1)
  read -r c_b c_con c_cons < <(bq --messages "$n_batch" --batch "$k")
  read -r a_b a_con a_cons < <(ceil --messages "$n_batch" --batch "$k")
  read -r h_b h_con h_cons < <(ceil --messages "$n_batch" --batch "$k" --hop 1)
  read -r p_pub64 p_con64 p_cons64 < <(py --credit "$prefetch")
  read -r a_bp a_conr a_consr < <(ceil --messages "$n_batch" --batch "$k" --project 1 --read 1)
  read -r _ y_con y_cons < <(ceil --messages "$n_batch" --batch "$k" --hop 1 --async-ack 1)
  read -r n_s _ _ < <(ceil --messages "$n_single" --durable 0)
  l1=$(load)
  line="$r $c_s $a_s $h_s $c_b $a_b $h_b $a_bp $c_con $a_con $h_con $a_conr $c_cons $a_cons $h_cons $a_consr"
  line+=" $p_pub1 $p_pub64 $p_con1 $p_con64 $p_cons1 $p_cons64 $cs_con $as_con $y_con $y_cons $n_s $l0 $l1"
  echo "round $line ($((SECONDS - t_start)) s)" >&2
  zeros=$(tr ' ' '\n' <<<"$line" | grep -cx 0 || true)
  if [[ $zeros -gt 0 ]]; then
    echo "a measurement failed in round $r" >&2
    exit 1
  fi
  echo "$line" >>"$results"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); $((SECONDS - t_start)) s"

python3 - "$results" "$k" "$prefetch" "$query" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
k, pf = sys.argv[2], sys.argv[3]
# durable=false in the query: the CLI and every ceiling row send non-durable messages.
nondurable = any(kv.split("=", 1)[0] == "durable"
                 and kv.split("=", 1)[-1].lower() in ("false", "0", "no", "off")
                 for kv in sys.argv[4].lstrip("?").split("&"))
(R, CS, AS, HS, CB, AB, HB, ABP, CCON, ACON, HCON, ACONR, CCONS, ACONS, HCONS, ACONSR,
 PPUB1, PPUB64, PCON1, PCON64, PCONS1, PCONS64, CSCON, ASCON, YCON, YCONS, NS, L0, L1) = range(29)
med = lambda f: statistics.median(f(r) for r in rows)
lo = lambda c: min(r[c] for r in rows)
hi = lambda c: max(r[c] for r in rows)
print("\nper round: load average before/after: " +
      ", ".join(f"round {int(r[R])} {r[L0]:.1f}/{r[L1]:.1f}" for r in rows))
print(f"\nmedians of {len(rows)} rounds (msg/s; ratios are medians of per-round ratios; "
      f"'vs ceiling' bar >= 80 %, 'vs Python' bar >= 5x)")
print(f"{'measurement':56} {'C++':>8} {'ceiling':>8} {'vs ceil':>8} {'Python':>8} {'vs Py':>7}  C++ min-max")
def row(name, c, a, p=None):
    s = f"{name:56} {med(lambda r: r[c]):8.0f} {med(lambda r: r[a]):8.0f} {100 * med(lambda r: r[c] / r[a]):7.0f}%"
    if p is not None:
        s += f" {med(lambda r: r[p]):8.0f} {med(lambda r: r[c] / r[p]):6.1f}x"
    else:
        s += " " * 16
    s += f"  {lo(c):.0f}-{hi(c):.0f}"
    print(s)
# Python publishes one awaited message at a time whatever its credit: both runs measure it.
for r in rows:
    r.append(max(r[PPUB1], r[PPUB64]))
PPUB = len(rows[0]) - 1
row("publish awaited, single (Py awaited)", CS, AS, PPUB)
row("  the same vs the ceiling across a thread hop", CS, HS)
row(f"publish batch {k} (Py awaited, its only mode)", CB, AB, PPUB)
row(f"  the same vs the ceiling across a thread hop", CB, HB)
row(f"  the same vs the ceiling projecting per message", CB, ABP)
row(f"consume prefetch {pf} (Py credit {pf})", CCON, ACON, PCON64)
row(f"  the same vs Python at its default credit 1", CCON, ACON, PCON1)
row(f"  the same vs the ceiling across a thread hop", CCON, HCON)
row(f"  the same vs the hop ceiling, settlements not awaited", CCON, YCON)
row(f"  the same vs the ceiling reading body + headers", CCON, ACONR)
row(f"consume steady (from 1st message) (Py credit {pf})", CCONS, ACONS, PCONS64)
row(f"  the same vs the ceiling across a thread hop", CCONS, HCONS)
row(f"consume prefetch {pf}, the awaited run's queue", CSCON, ASCON)
print(f"\nthe hop ceiling vs the plain ceiling: awaited publish {100 * med(lambda r: r[HS] / r[AS]):.0f} %, "
      f"batch {k} {100 * med(lambda r: r[HB] / r[AB]):.0f} %, consume {100 * med(lambda r: r[HCON] / r[ACON]):.0f} %")
print(f"projecting per message + reading body/headers vs the plain ceiling: publish batch {k} "
      f"{100 * med(lambda r: r[ABP] / r[AB]):.0f} %, consume {100 * med(lambda r: r[ACONR] / r[ACON]):.0f} %")
print(f"the hop ceiling with settlements not awaited vs the plain ceiling: consume "
      f"{100 * med(lambda r: r[YCON] / r[ACON]):.0f} %, vs the hop ceiling {100 * med(lambda r: r[YCON] / r[HCON]):.0f} %")
print(f"awaited publish, ceiling with non-durable messages (no journal): {med(lambda r: r[NS]):.0f} msg/s, "
      f"{med(lambda r: r[NS] / r[AS]):.1f}x the {'(also non-durable: durable=false)' if nondurable else 'durable'} ceiling, "
      f"{med(lambda r: r[NS] / r[PPUB]):.1f}x Python (non-durable too)")
if nondurable:
    print("durable=false: the C++ and ceiling rows above are non-durable, the same job as Python's")
print("Python: ArtemisTransport.publish waits for each message's settlement (no batch mode, not"
      " durable); its consume is receive + accept with credit 1 (the SDK's default) or the C++ prefetch.")
PY
rm -f "$results"
