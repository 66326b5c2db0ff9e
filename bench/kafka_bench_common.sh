# Sourced by bench/kafka_rounds.sh and bench/kafka_consume_rounds.sh: one fresh topic per
# measurement through kafka_ceiling's create/delete phases, and the parsers of a run's
# output. The caller sets $ceiling, $url and $prefix first.
seq_no=0
current=
cleanup() {
  [[ -n $current ]] && "$ceiling" --url "$url" --topic "$current" --group "$current" --phase delete \
    >/dev/null 2>&1 || true
}
trap cleanup EXIT

# fresh: a new topic (created now, 1 partition) whose consumer group has the same name.
fresh() {
  seq_no=$((seq_no + 1))
  current=$prefix-$seq_no
  "$ceiling" --url "$url" --topic "$current" --phase create >/dev/null
}
drop() {
  "$ceiling" --url "$url" --topic "$current" --group "$current" --phase delete >/dev/null
  "$ceiling" --url "$url" --topic "$current" --group "$current-read" --phase delete >/dev/null 2>&1 || true
  current=
}
# rate <phase> : msgs/s of "phase: ... = R msg/s" on stdin
rate() { sed -nE "s/^$1: .* = ([0-9]+) msg\/s.*/\1/p" | head -1; }
# or0: the value, or 0 when a measurement printed nothing (the round is then rejected)
or0() { [[ -n $1 ]] && echo "$1" || echo 0; }
