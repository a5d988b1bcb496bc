#!/usr/bin/env python3
"""`txq report` against its own queries: the page's time beside each of its canned queries run alone
(`txq query NAME`), on one corpus, after a warm-up of each (page cache and inference cache warm).
Writes the section "## The report" of benchmarks/RESULTS.md.

Usage: benchmarks/report.py --corpus DIR --txq BIN [--runs N] [--results FILE] [--command TEXT]
"""
import argparse
import os
import re
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import files_of, measured, replace_section  # noqa: E402


def page_queries():
    """The queries of the page, as src/report/mod.rs lists them."""
    source = open(os.path.join(os.path.dirname(__file__), "..", "src", "report", "mod.rs")).read()
    listed = re.search(r"pub const QUERIES: &\[&str\] = &\[(.*?)\];", source, re.S).group(1)
    return re.findall(r'"([a-z_]+)"', listed)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", required=True)
    p.add_argument("--txq", required=True)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--results")
    p.add_argument("--command", default="benchmarks/report.py")
    args = p.parse_args()
    files = files_of(args.corpus)
    total = sum(os.path.getsize(f) for f in files)
    out = os.path.join(tempfile.mkdtemp(), "report.html")
    report = [args.txq, "-q", "report", "--out", out, args.corpus]
    runs = {"txq report": report}
    for name in page_queries():
        runs[name] = [args.txq, "-q", "--format", "csv", "query", name, args.corpus]
    times, mb = {}, {}
    for name, cmd in runs.items():
        measured(cmd)
        got = [measured(cmd)[:2] for _ in range(args.runs)]
        times[name] = statistics.median(t for t, _ in got)
        mb[name] = max(m for _, m in got)
    alone = {k: v for k, v in times.items() if k != "txq report"}
    lines = [
        "## The report",
        "",
        f"Run on {time.strftime('%Y-%m-%d')} with: `{args.command}`.",
        f"Corpus: {len(files)} files, {total / 1e9:.2f} GB ({args.corpus}); median of {args.runs} runs "
        "after one warm-up each; page cache and inference cache warm. Each query alone is "
        "`txq query NAME --format csv`, a process of its own (its start and the corpus opened included).",
        "",
        "| what | s | peak MB |",
        "|---|---|---|",
    ]
    lines += [f"| `{k}` | {v:.3f} | {mb[k]:.0f} |" for k, v in times.items()]
    lines += [
        "",
        f"The page takes {times['txq report'] / sum(alone.values()):.2f}× the time of its {len(alone)} queries "
        f"run one after another, {times['txq report'] / max(alone.values()):.2f}× the slowest alone "
        f"(`{max(alone, key=alone.get)}`).",
    ]
    print("\n".join(lines))
    if args.results:
        replace_section(args.results, "## The report", lines)


if __name__ == "__main__":
    main()
