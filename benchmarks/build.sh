#!/usr/bin/env bash
# Measures what a build profile costs and gives: a cold build of txq in that profile (wall and CPU
# time, every crate compiled, in a target folder of its own under benchmarks/data/), the binary's
# size, and the time of one query (median of 3 after a warm-up, page cache warm). Appends one row
# per profile to benchmarks/BUILD.md.
# Usage: benchmarks/build.sh [PROFILE...]      (default: release dist; see Cargo.toml)
# KEEP=1 keeps each profile's target folder (benchmarks/data/build-<profile>) instead of removing it.
# The query runs on benchmarks/data/claude-1GB, written first when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
profiles=("$@")
[ ${#profiles[@]} -gt 0 ] || profiles=(release dist)
corpus=benchmarks/data/claude-1GB
query="select model, count(*) as calls, sum(input_tokens) as i, sum(output_tokens) as o from calls group by model order by model"
results=benchmarks/BUILD.md
if [ ! -f "$results" ]; then
  cat > "$results" <<'HEAD'
# Build profiles: build time, binary size, query time

Written by `benchmarks/build.sh` (one row per profile and run; never edit the figures by hand).
Each build is cold (every crate compiled, in a target folder of its own) on this machine: 2
cores. The query is `calls` by model (the Claude Code dedupe) over benchmarks/data/claude-1GB
with `--no-cache`, median of 3 runs after a warm-up.

| date | commit | profile | settings | build wall s | build CPU s | binary MB | query s |
|---|---|---|---|---|---|---|---|
HEAD
fi
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for profile in "${profiles[@]}"; do
  target="benchmarks/data/build-$profile"
  rm -rf "$target"
  log="$(mktemp)"
  /usr/bin/time -f "%e %U %S" -o "$log" cargo build --quiet --locked --profile "$profile" --target-dir "$target"
  read -r wall user sys < "$log"
  rm -f "$log"
  dir="$profile"; [ "$profile" = dev ] && dir=debug
  bin="$target/$dir/txq"
  size=$(stat -c %s "$bin")
  if [ ! -d "$corpus" ]; then
    "$bin" generate --out "$corpus" --harness claude --size 1GB --seed 7 >/dev/null
  fi
  "$bin" -q --no-cache --format csv -e "$query" "$corpus" >/dev/null
  times=()
  for _ in 1 2 3; do
    start=$(date +%s.%N)
    "$bin" -q --no-cache --format csv -e "$query" "$corpus" >/dev/null
    times+=("$(echo "$(date +%s.%N) - $start" | bc)")
  done
  took=$(printf '%s\n' "${times[@]}" | median)
  settings=$(awk -v p="[profile.$profile]" '$0 == p { on = 1; next } /^\[/ { on = 0 } on && NF && $1 !~ /^#/ { printf "%s%s", sep, $0; sep = "; " }' Cargo.toml)
  printf '| %s | %s | %s | `%s` | %.0f | %.0f | %.1f | %.3f |\n' "$(date -u +%F)" "$(git rev-parse --short=12 HEAD)" \
    "$profile" "${settings:-the defaults}" "$wall" "$(echo "$user + $sys" | bc)" "$(echo "$size / 1048576" | bc -l)" "$took" >> "$results"
  tail -1 "$results"
  [ -n "${KEEP:-}" ] || rm -rf "$target"
done
