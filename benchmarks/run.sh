#!/usr/bin/env bash
# Benchmarks txq against DuckDB and jq on generated corpora, and writes benchmarks/RESULTS.md.
# Usage: benchmarks/run.sh [SIZES] [RUNS]     (defaults: "1GB 4GB", 3; sizes smallest first)
# CLAUDE=1GB also runs the Claude Code question on a generated home of that size (CLAUDE_ONLY=1:
# that alone, its section of RESULTS.md replaced and the others kept).
# RESULTS.md ends with the stream check: peak RSS of `select * from events` in every format to
# /dev/null on the smallest corpus (each under 150 MB). STREAM_ONLY=1 runs and prints only that.
# HARNESS="650MB 4GB" also times txq against ccusage (benchmarks/harness.py) on generated harness homes
# benchmarks/data/harness-<size>, after the rest, its section of RESULTS.md replaced (HARNESS_ONLY=1:
# that alone).
# STATUSLINE=1GB times `txq statusline` against `ccusage statusline` (benchmarks/statusline.py) on a
# Claude Code home generated at that size and made the home of today (its timestamps moved back by
# whole days to end an hour before the run), its section of RESULTS.md replaced
# (STATUSLINE_ONLY=1: that alone).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes="${1:-1GB 4GB}"
runs="${2:-3}"
python3 -c "import duckdb" 2>/dev/null || pip install --quiet duckdb==2.0.1
command -v jq >/dev/null || { apt-get update -qq && apt-get install -y -qq jq; }
cargo build --release --quiet
txq="${CARGO_TARGET_DIR:-target}/release/txq"
if [ -n "${CLAUDE:-}" ]; then
  home="benchmarks/data/claude-$CLAUDE"
  if [ ! -d "$home" ]; then
    "$txq" generate --out "$home" --harness claude --size "$CLAUDE" --seed 7
  fi
  if [ -n "${CLAUDE_ONLY:-}" ]; then
    exec python3 benchmarks/bench.py --claude-corpus "$home" --txq "$txq" --runs "$runs" \
      --results benchmarks/RESULTS.md --command "CLAUDE=$CLAUDE CLAUDE_ONLY=1 benchmarks/run.sh \"$sizes\" $runs"
  fi
fi
if [ -n "${STATUSLINE:-}" ]; then
  statusline_cmd=(python3 benchmarks/statusline.py --txq "$txq" --home "benchmarks/data/statusline-$STATUSLINE"
    --size "$STATUSLINE" --results benchmarks/RESULTS.md)
  if [ -n "${STATUSLINE_ONLY:-}" ]; then
    exec "${statusline_cmd[@]}" --command "STATUSLINE=$STATUSLINE STATUSLINE_ONLY=1 benchmarks/run.sh"
  fi
fi
if [ -n "${HARNESS:-}" ]; then
  # `txq generate --harness all --runs 9000 --seed 7` wrote 699,582,102 bytes (0.65 GiB, 30630 files),
  # so 4 GiB is about 4 / 0.6515 x 9000 = 55,250 runs: 55000 (the size grows in step with the runs).
  harness_homes=()
  for size in $HARNESS; do
    case "$size" in
      650MB) n=9000 ;;
      4GB) n=55000 ;;
      *) echo "HARNESS: no run count for $size (650MB or 4GB; 9000 runs write 0.70 GB)" >&2; exit 2 ;;
    esac
    harness_homes+=(--home "benchmarks/data/harness-$size" --runs-per-harness "$n")
  done
  harness_cmd=(python3 benchmarks/harness.py "${harness_homes[@]}" --txq "$txq" --runs "$runs"
    --results benchmarks/RESULTS.md)
  if [ -n "${HARNESS_ONLY:-}" ]; then
    exec "${harness_cmd[@]}" --command "HARNESS=\"$HARNESS\" HARNESS_ONLY=1 benchmarks/run.sh \"$sizes\" $runs"
  fi
fi
corpora=()
for size in $sizes; do
  data="benchmarks/data/$size"
  if [ ! -d "$data" ]; then
    "$txq" generate --out "$data" --size "$size" --seed 7 --tool-output-bytes 1000,20000 --reeval-runs 0
  fi
  corpora+=(--corpus "$data/.rupu/transcripts")
done
if [ -n "${STREAM_ONLY:-}" ]; then
  exec python3 benchmarks/bench.py "${corpora[@]}" --txq "$txq" --runs "$runs" --stream-only
fi
python3 benchmarks/bench.py "${corpora[@]}" ${CLAUDE:+--claude-corpus "benchmarks/data/claude-$CLAUDE"} \
  --txq "$txq" --runs "$runs" --results benchmarks/RESULTS.md --command "benchmarks/run.sh \"$sizes\" $runs"
if [ -n "${HARNESS:-}" ]; then
  "${harness_cmd[@]}" --command "HARNESS=\"$HARNESS\" benchmarks/run.sh \"$sizes\" $runs"
fi
if [ -n "${STATUSLINE:-}" ]; then
  "${statusline_cmd[@]}" --command "STATUSLINE=$STATUSLINE benchmarks/run.sh \"$sizes\" $runs"
fi
