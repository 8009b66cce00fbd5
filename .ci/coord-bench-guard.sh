#!/usr/bin/env bash
# Contract Net's speed, guarded by instruction counts (which load on the machine does not
# move, unlike seconds): runs `coord_bench` under callgrind for the auction mechanics (2,000
# auctions × 1,000 bidders) and the whole path (1,000 auctions × 1,000 robots through the
# Control Center and every robot's abstraction layer) and fails, loudly, when either costs
# more than 10 % above the count recorded in .ci/coord-bench-instructions.
#
#   .ci/coord-bench-guard.sh            # check (needs valgrind; about a minute of build, seconds to run)
#   .ci/coord-bench-guard.sh --record   # record the current counts as the new reference
#
# Part of .ci/run, after the tests; run it before merging a change to the auction or
# allocation core.
set -euo pipefail
cd "$(dirname "$0")/.."
REF=.ci/coord-bench-instructions
TOLERANCE=10 # percent
command -v valgrind >/dev/null || { echo "coord-bench-guard: valgrind is not installed (apt-get install -y valgrind)" >&2; exit 2; }
cargo build --quiet --release -p simrob-coord --example coord_bench
BIN=target/release/examples/coord_bench
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failed=0
declare -A measured
for part in mechanics whole; do
  valgrind --tool=callgrind --callgrind-out-file="$TMP/$part.out" "$BIN" --only "$part" --auctions 2000 >"$TMP/$part.txt" 2>"$TMP/$part.err" ||
    { cat "$TMP/$part.err" >&2; echo "coord-bench-guard: coord_bench --only $part failed" >&2; exit 2; }
  measured[$part]=$(awk '/^summary:/ {print $2}' "$TMP/$part.out")
done
if [[ "${1:-}" == "--record" ]]; then
  {
    echo "# Instructions of coord_bench under callgrind (.ci/coord-bench-guard.sh --record)."
    for part in mechanics whole; do echo "$part ${measured[$part]}"; done
  } >"$REF"
  echo "coord-bench-guard: recorded in $REF"; cat "$REF"
  exit 0
fi
for part in mechanics whole; do
  ref=$(awk -v p="$part" '$1 == p {print $2}' "$REF")
  now=${measured[$part]}
  [[ -n "$ref" ]] || { echo "coord-bench-guard: no reference for $part in $REF (run with --record)" >&2; exit 2; }
  pct=$(( (now - ref) * 100 / ref ))
  printf 'coord-bench-guard: %-9s %13d instructions, reference %13d (%+d %%): %s\n' \
    "$part" "$now" "$ref" "$pct" "$(head -1 "$TMP/$part.txt")"
  if (( now * 100 > ref * (100 + TOLERANCE) )); then
    echo "coord-bench-guard: REGRESSION: Contract Net $part costs $pct % more instructions than recorded (more than $TOLERANCE %)" >&2
    failed=1
  fi
done
exit $failed
