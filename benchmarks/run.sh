#!/usr/bin/env bash
# Benchmarks txq against DuckDB and jq on a generated corpus, and writes benchmarks/RESULTS.md.
# Usage: benchmarks/run.sh [SIZE] [RUNS]     (defaults: 1GB, 5)
set -euo pipefail
cd "$(dirname "$0")/.."
size="${1:-1GB}"
runs="${2:-5}"
python3 -c "import duckdb" 2>/dev/null || pip install --quiet duckdb==2.0.1
command -v jq >/dev/null || { apt-get update -qq && apt-get install -y -qq jq; }
cargo build --release --quiet
txq="${CARGO_TARGET_DIR:-target}/release/txq"
data="benchmarks/data/$size"
if [ ! -d "$data" ]; then
  "$txq" generate --out "$data" --size "$size" --seed 7 --tool-output-bytes 1000,20000 --reeval-runs 0
fi
python3 benchmarks/bench.py --corpus "$data/.rupu/transcripts" --txq "$txq" --runs "$runs" \
  --results benchmarks/RESULTS.md --command "benchmarks/run.sh $size $runs"
