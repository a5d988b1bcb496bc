#!/usr/bin/env bash
# The screenshot of docs/report.md: txq (the dev build; CARGO_TARGET_DIR is honoured) writes the
# report of examples/sample, and headless Chromium (Debian's `chromium` package) takes a
# screenshot of its first 1280x2400 pixels into docs/report.png. TXQ=path/to/txq uses that txq
# instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${TXQ:-}" ]; then
    cargo build --quiet
    TXQ="${CARGO_TARGET_DIR:-target}/debug/txq"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# HOME is the sample too, so that nothing of the user's is read, nor their cache written.
HOME="$PWD/examples/sample" TXQ_CACHE_DIR="$work/cache" "$TXQ" -q report --out "$work/report.html" examples/sample
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --hide-scrollbars --window-size=1280,2400 \
    --screenshot="$PWD/docs/report.png" "file://$work/report.html" 2>/dev/null
echo "docs/report.png: the report of examples/sample"
