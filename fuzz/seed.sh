#!/bin/sh
# Writes the seed corpus of both fuzz targets from txq's own generator: every generated
# transcript (rupu and reeval, the damaged ones included), cut to its first 4 KB, behind the two
# control bytes the targets read first (block size, line limit). Run from anywhere:
#   fuzz/seed.sh    -> fuzz/corpus/lines/, fuzz/corpus/read/
set -eu
here=$(cd "$(dirname "$0")" && pwd)
gen=$(mktemp -d)
trap 'rm -rf "$gen"' EXIT
cargo run -q --manifest-path "$here/../Cargo.toml" -- generate --out "$gen" --runs 4 --reeval-runs 1 2>/dev/null
mkdir -p "$here/corpus/lines" "$here/corpus/read"
n=0
find "$gen" -name '*.jsonl' | sort | while read -r file; do
    n=$((n + 1))
    # Blocks of 8 bytes, no line limit; then blocks of 33 bytes and a limit of 16 * 8 bytes.
    { printf '\007\377'; head -c 4000 "$file"; } > "$here/corpus/read/seed-$n-a"
    { printf '\040\020'; head -c 4000 "$file"; } > "$here/corpus/read/seed-$n-b"
    { printf '\007\377'; head -c 4000 "$file"; } > "$here/corpus/lines/seed-$n-a"
    { printf '\040\100'; head -c 4000 "$file"; } > "$here/corpus/lines/seed-$n-b"
done
echo "seeds: $(ls "$here/corpus/read" | wc -l) per target in $here/corpus/"
