#!/usr/bin/env bash
# Turns the contract suite's results file (lines `<case>\t<target>\t<outcome>\t<reason>`,
# written by contract_results.hpp) into the case × transport table: Markdown, written to
# <out> and printed. The last line per (case, target) wins (a re-run replaces a result).
# Usage: contract_table.sh <results.tsv> <out.md>
set -euo pipefail
results=$1
out=$2
if [[ ! -s $results ]]; then
  echo "transport contract: no results in $results" | tee "$out"
  exit 0
fi
awk -F'\t' '
  { key = $1 SUBSEP $2; cell[key] = ($3 == "skipped") ? "skipped: " $4 : $3
    if (!($1 in seen_case)) { seen_case[$1] = 1; cases[++nc] = $1 }
    if (!($2 in seen_target)) { seen_target[$2] = 1; targets[++nt] = $2 } }
  END {
    order = "memory sqlite redis redis_laravel redis_cluster redis_sentinel amqp kafka artemis sb sqs sqs_fifo pulsar"
    n = split(order, known, " "); m = 0
    for (i = 1; i <= n; i++) if (known[i] in seen_target) cols[++m] = known[i]
    for (i = 1; i <= nt; i++) { found = 0; for (j = 1; j <= m; j++) if (cols[j] == targets[i]) found = 1
                                if (!found) cols[++m] = targets[i] }
    printf "| case |"; for (j = 1; j <= m; j++) printf " %s |", cols[j]; print ""
    printf "|---|"; for (j = 1; j <= m; j++) printf "---|"; print ""
    for (i = 1; i <= nc; i++) {
      printf "| %s |", cases[i]
      for (j = 1; j <= m; j++) { k = cases[i] SUBSEP cols[j]; printf " %s |", (k in cell) ? cell[k] : "-" }
      print ""
    }
  }' "$results" >"$out"
echo "== transport contract: case x transport =="
cat "$out"
