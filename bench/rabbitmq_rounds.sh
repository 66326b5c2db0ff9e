#!/usr/bin/env bash
# Measures the RabbitMQ bars of the amqp:// issue: `babelqueue bench --broker amqp://...`
# beside (a) plain rabbitmq-c loops with the same settings (bench/rabbitmq_ceiling.cpp, the
# ceiling of this client library; bar >= 80 %) and (b) the Python SDK doing the same job
# (bench/peers/python_rabbitmq_bench.py; bar >= 5x), several interleaved rounds, ratios per
# round, medians at the end. Also what publisher confirms cost (the ceiling loop with
# confirms off).
#   source /tmp/bq-services/services.env   # or build/services/services.env: BABELQUEUE_RABBITMQ_URL
#   bash bench/rabbitmq_rounds.sh [rounds]  (default 3)
# Needs build/release/cli/babelqueue and build/release/bench/rabbitmq_ceiling
#   (cmake --preset release && cmake --build build/release --target babelqueue_cli rabbitmq_ceiling)
# and the Python peer with the amqp extra (scripts/setup-python-peer.sh; $BABELQUEUE_PEER_PYTHON
# or build/peer-python.txt). Environment: N_SINGLE, N_BATCH, N_PY (message counts), BATCH (K).
# Every measurement uses its own fresh queue, deleted afterwards. The broker, the client and
# the Python peer share the machine's cores: run it on a quiet machine.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-3}
cli=${BABELQUEUE_CLI:-$repo/build/release/cli/babelqueue}
ceiling=${BABELQUEUE_CEILING:-$repo/build/release/bench/rabbitmq_ceiling}
url=${BABELQUEUE_RABBITMQ_URL:?set BABELQUEUE_RABBITMQ_URL (source the services.env of scripts/services.sh)}
python=${BABELQUEUE_PEER_PYTHON:-$(cat "$repo/build/peer-python.txt" 2>/dev/null || true)}
[[ -x "$cli" ]] || { echo "build the release preset first ($cli missing)" >&2; exit 2; }
[[ -x "$ceiling" ]] || { echo "build rabbitmq_ceiling first ($ceiling missing)" >&2; exit 2; }
[[ -x "$python" ]] || { echo "no Python peer: run scripts/setup-python-peer.sh" >&2; exit 2; }
n_single=${N_SINGLE:-3000}  # confirmed single publishes (one broker fsync-bound round trip each)
n_batch=${N_BATCH:-20000}  # batched publishes, and the queues the consumers drain
n_py=${N_PY:-2000}
k=${BATCH:-64}
q_prefix=bq-bench-$$
seq_no=0
cleanup() { "$ceiling" --url "$url" --queue "$q_prefix-$seq_no" --phase delete >/dev/null 2>&1 || true; }
trap cleanup EXIT

fresh_queue() { seq_no=$((seq_no + 1)); echo "$q_prefix-$seq_no"; }
drop() { "$ceiling" --url "$url" --queue "$1" --phase delete >/dev/null; }
# rate <phase> : msgs/s of "phase: ... = R msg/s" on stdin
rate() { sed -nE "s/^$1: .* = ([0-9]+) msg\/s.*/\1/p"; }

# bq <query> <bench args>  -> "PUB CON" of one `babelqueue bench` run
bq() {
  local q out
  q=$(fresh_queue)
  out=$("$cli" bench --broker "$url$1" --queue "$q" --size 370 "${@:2}")
  drop "$q"
  echo "$(rate publish <<<"$out") $(rate consume <<<"$out")"
}
# ceil <ceiling args> -> "PUB CON" (CON = 0 for --phase publish)
ceil() {
  local q out c
  q=$(fresh_queue)
  out=$("$ceiling" --url "$url" --queue "$q" --size 370 "$@")
  drop "$q"
  c=$(rate consume <<<"$out")
  echo "$(rate publish <<<"$out") ${c:-0}"
}
# py <publishers> -> "PUB CON"
py() {
  local q out
  q=$(fresh_queue)
  out=$("$python" "$repo/bench/peers/python_rabbitmq_bench.py" "$url" "$q" "$n_py" 370 "$1")
  drop "$q"
  echo "$(rate publish <<<"$out") $(rate consume <<<"$out")"
}

echo "rabbitmq_rounds: $rounds rounds; single publishes $n_single, batched/consumed $n_batch, batch K=$k, python $n_py"
results=$(mktemp)
for r in $(seq "$rounds"); do
  # Interleaved: each C++ measurement right beside its ceiling, Python in between.
  read -r c_s1 _ < <(bq "?prefetch=64" --messages "$n_single")
  read -r a_s1 _ < <(ceil --messages "$n_single" --phase publish)
  read -r c_b1 c_c1 < <(bq "?prefetch=1" --messages "$n_batch" --batch "$k")
  read -r a_b1 a_c1 < <(ceil --messages "$n_batch" --batch "$k" --prefetch 1)
  read -r p_s1 p_c < <(py 1)
  read -r c_b1b c_c64 < <(bq "?prefetch=64" --messages "$n_batch" --batch "$k")
  read -r a_b1b a_c64 < <(ceil --messages "$n_batch" --batch "$k" --prefetch 64)
  read -r c_s4 _ < <(bq "?prefetch=64" --messages "$n_single" --publishers 4)
  read -r a_s4 _ < <(ceil --messages "$n_single" --publishers 4 --phase publish)
  read -r c_b4 _ < <(bq "?prefetch=64" --messages "$n_batch" --publishers 4 --batch "$k")
  read -r a_b4 _ < <(ceil --messages "$n_batch" --publishers 4 --batch "$k" --phase publish)
  read -r u_1 _ < <(ceil --messages "$n_batch" --confirms 0 --phase publish)
  read -r u_4 _ < <(ceil --messages "$n_batch" --publishers 4 --confirms 0 --phase publish)
  read -r p_s4 _ < <(py 4)
  # The batched single-publisher rate is the mean of the two runs that measured it.
  c_b1=$(( (c_b1 + c_b1b) / 2 ))
  a_b1=$(( (a_b1 + a_b1b) / 2 ))
  line="$r $c_s1 $a_s1 $c_b1 $a_b1 $c_s4 $a_s4 $c_b4 $a_b4 $c_c1 $a_c1 $c_c64 $a_c64 $p_s1 $p_s4 $p_c $u_1 $u_4"
  echo "round $line" >&2
  [[ $(wc -w <<<"$line") -eq 18 ]] || { echo "a measurement failed in round $r" >&2; exit 1; }
  echo "$line" >>"$results"
done

python3 - "$results" "$k" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
k = sys.argv[2]
(R, CS1, AS1, CB1, AB1, CS4, AS4, CB4, AB4, CC1, AC1, CC64, AC64, PS1, PS4, PC, U1, U4) = range(18)
med = lambda f: statistics.median(f(r) for r in rows)
print(f"\nmedians of {len(rows)} rounds (msg/s; 'vs ceiling' bar >= 80 %, 'vs Python' bar >= 5x)")
print(f"{'measurement':34} {'C++':>8} {'ceiling':>8} {'vs ceil':>8} {'Python':>8} {'vs Py':>7}")
def row(name, c, a, p=None):
    s = f"{name:34} {med(lambda r: r[c]):8.0f} {med(lambda r: r[a]):8.0f} {100 * med(lambda r: r[c] / r[a]):7.0f}%"
    if p is not None:
        s += f" {med(lambda r: r[p]):8.0f} {med(lambda r: r[c] / r[p]):6.1f}x"
    print(s)
row("publish confirmed, 1 pub, single", CS1, AS1, PS1)
row(f"publish confirmed, 1 pub, batch {k}", CB1, AB1, PS1)
row("publish confirmed, 4 pub, single", CS4, AS4, PS4)
row(f"publish confirmed, 4 pub, batch {k}", CB4, AB4, PS4)
row("consume prefetch 1", CC1, AC1, PC)
row("consume prefetch 64", CC64, AC64, PC)
print("\nwhat confirms cost (ceiling loop, confirms off = 100 %):")
print(f"  1 publisher: unconfirmed {med(lambda r: r[U1]):.0f} msg/s; confirmed single "
      f"{100 * med(lambda r: r[AS1] / r[U1]):.1f} %, batch {k} {100 * med(lambda r: r[AB1] / r[U1]):.0f} %")
print(f"  4 publishers: unconfirmed {med(lambda r: r[U4]):.0f} msg/s; confirmed single "
      f"{100 * med(lambda r: r[AS4] / r[U4]):.1f} %, batch {k} {100 * med(lambda r: r[AB4] / r[U4]):.0f} %")
print("Python: the SDK publishes unconfirmed and consumes by basic.get (no batch, no prefetch);"
      " its 1- and 4-publisher runs are the reference of the single and batched rows alike.")
PY
rm -f "$results"
