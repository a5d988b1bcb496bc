#!/usr/bin/env python3
"""txq against ccusage on generated harness homes: the spend reports people run today, side by side.

A home is what `txq generate --harness all` writes: HOME/.claude and HOME/.config/claude (Claude
Code), HOME/.codex (Codex CLI) and HOME/.gemini (Gemini CLI). Each question runs as

  txq warm    `txq -q query daily PATHS` with TXQ_CACHE_DIR a cache filled by an earlier run
              (emptied when the script starts, filled by the question's warm-up run);
  txq first   the same with TXQ_CACHE_DIR an EMPTY directory, deleted and made again before every
              run (what a first run on a machine costs);
  ccusage     `HOME=<home> ccusage <agent> daily --offline` (ccusage keeps no cache).

The questions, per home: `daily` of Claude Code, of Codex, of Gemini and of all three; the
all-harness `session`; `blocks` (ccusage's `blocks` reads Claude Code only, so it is compared with
txq's blocks over the Claude Code folders, and txq's blocks of all three is timed on its own); and
`select harness, model, count(*), sum(input_tokens) from calls group by 1, 2`, which ccusage cannot
answer: its ccusage columns are n/a (ccusage's nearest report, `daily` of all agents, is the daily
row). Every run is a fresh process with stdout to /dev/null, its peak RSS read from wait4()
(ru_maxrss: for ccusage, whose `ccusage` command is a Node launcher that spawns a native binary, the
largest process of that tree, not their sum); runs are interleaved (txq warm, txq first, ccusage,
txq warm, ...) after one untimed warm-up of each; times are medians, MB the largest peak. Both tools
run with HOME=<home>, TZ=UTC, and CLAUDE_CONFIG_DIR, CODEX_HOME and GEMINI_CLI_HOME unset. A
process that exits non-zero ends the script for txq and marks ccusage's cells for ccusage.

After the timing, one `--json` run of each tool per `daily` question gives both tools' total tokens
and cost: a cheap check that they read the same calls (they are printed, not judged).

The section `## Spend reports against ccusage` of --results is replaced (the other sections are
kept), with a `### <home's size>` subsection per home, the machine, the tools' versions, each home's
bytes and files, and the command. Numbers come from this run only. The table also prints to stdout.

If ccusage is not on PATH the script installs ccusage 20.0.24 with npm; without npm its columns are
n/a. `--home DIR --runs-per-harness N` generates DIR (`txq generate -q --harness all --runs N
--seed 7`) when it does not exist; `benchmarks/run.sh` maps sizes to N (HARNESS="650MB 4GB").

Usage: benchmarks/harness.py --txq target/release/txq --home benchmarks/data/harness-650MB \\
         [--runs-per-harness 9000] [--runs 3] [--results benchmarks/RESULTS.md] [--command STR]
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no benchmarks/__pycache__ from importing bench
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import replace_section  # noqa: E402

HEADING = "## Spend reports against ccusage"
CCUSAGE_VERSION = "20.0.24"
NPM_INSTALL = ["npm", "install", "-g", f"ccusage@{CCUSAGE_VERSION}", f"@ccusage/ccusage-linux-x64@{CCUSAGE_VERSION}"]
CALLS_SQL = "select harness, model, count(*), sum(input_tokens) from calls group by 1, 2"
# Variables that would point either tool away from the home's default places.
UNSET = ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"]


def harness_paths(home):
    claude = [os.path.join(home, ".claude"), os.path.join(home, ".config", "claude")]
    return {
        "Claude Code": [p for p in claude if os.path.isdir(p)],
        "Codex": [os.path.join(home, ".codex")],
        "Gemini": [os.path.join(home, ".gemini")],
    }


def questions(home):
    """(name, txq arguments after `txq -q`, ccusage arguments or None, daily-check kind or None)."""
    paths = harness_paths(home)
    qs = []
    for label, agent in (("Claude Code", "claude"), ("Codex", "codex"), ("Gemini", "gemini")):
        qs.append((f"daily, {label}", ["query", "daily"] + paths[label], [agent, "daily", "--offline"], True))
    qs += [
        ("daily, all three", ["query", "daily", home], ["daily", "--offline"], True),
        ("session, all three", ["query", "session", home], ["session", "--offline"], False),
        ("blocks, Claude Code (ccusage's blocks)", ["query", "blocks"] + paths["Claude Code"],
         ["blocks", "--offline"], False),
        ("blocks, all three", ["query", "blocks", home], None, False),
        ("calls by harness and model (SQL)", ["-e", CALLS_SQL, home], None, False),
    ]
    return qs


def run(cmd, env, capture=False):
    """Runs cmd under wait4 to read its own peak RSS; returns (seconds, MB, exit code, stdout, stderr)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, open(os.devnull, "wb") as null:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out if capture else null, stderr=err, stdin=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return elapsed, usage.ru_maxrss / 1024.0, proc.returncode, out.read(), err.read()


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)


def find_ccusage():
    """The ccusage command, installing it with npm when missing; None (after one line) without npm."""
    if shutil.which("ccusage"):
        return shutil.which("ccusage")
    if shutil.which("npm") is None:
        print("ccusage not found and npm missing: ccusage columns skipped", flush=True)
        return None
    print("ccusage not found: " + " ".join(NPM_INSTALL), flush=True)
    subprocess.run(NPM_INSTALL, check=True)
    return shutil.which("ccusage")


def version_of(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "unknown"


def tree_facts(paths):
    files = total = 0
    for root in paths:
        for d, _, names in os.walk(root):
            for n in names:
                files += 1
                total += os.path.getsize(os.path.join(d, n))
    return files, total


def ensure_home(home, runs_per_harness, txq):
    if os.path.isdir(home):
        return
    if not runs_per_harness:
        sys.exit(f"{home} does not exist: give --runs-per-harness N to generate it")
    cmd = [txq, "generate", "-q", "--out", home, "--harness", "all", "--runs", str(runs_per_harness), "--seed", "7"]
    print("generating: " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True)


def bench_home(home, args, ccusage, cache_dir):
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(HOME=os.path.abspath(home), TZ="UTC", NO_COLOR="1")
    warm_cache, first_cache = os.path.join(cache_dir, "warm"), os.path.join(cache_dir, "first")
    fresh_dir(warm_cache)
    env_warm = dict(env, TXQ_CACHE_DIR=warm_cache)
    env_first = dict(env, TXQ_CACHE_DIR=first_cache)

    def txq_cmd(q):
        return [args.txq, "-q"] + q[1]

    def once(kind, q):
        if kind == "txq warm":
            r = run(txq_cmd(q), env_warm)
        elif kind == "txq first":
            fresh_dir(first_cache)
            r = run(txq_cmd(q), env_first)
        else:
            r = run([ccusage] + q[2], env)
        t, mb, code, _, err = r
        if code != 0:
            msg = f"{kind} exited {code} on {q[0]}:\n{err.decode(errors='replace')[-2000:]}"
            if kind != "ccusage":
                sys.exit(msg)
            print(msg, flush=True)
        return t, mb, code

    rows = []
    for q in questions(home):
        kinds = ["txq warm", "txq first"] + (["ccusage"] if ccusage and q[2] else [])
        for kind in kinds:  # warm-up: page cache, and the warm inference cache
            once(kind, q)
        got = {k: [] for k in kinds}
        for _ in range(args.runs):
            for kind in kinds:
                got[kind].append(once(kind, q))
        row = {"name": q[0]}
        for kind, rs in got.items():
            failed = [c for _, _, c in rs if c != 0]
            row[kind] = (f"exit {failed[0]}" if failed else statistics.median(t for t, _, _ in rs),
                         max(m for _, m, _ in rs))
        rows.append(row)
        print(f"{q[0]}: " + ", ".join(f"{k} {fmt_s(row[k][0])}s {row[k][1]:.0f} MB" for k in kinds), flush=True)

    checks = []
    for q in questions(home):
        if not q[3]:
            continue
        _, _, code, out, err = run([args.txq, "-q"] + q[1][:2] + ["--json"] + q[1][2:], env_warm, capture=True)
        if code != 0:
            sys.exit(f"txq --json exited {code} on {q[0]}:\n{err.decode(errors='replace')[-2000:]}")
        days = json.loads(out)
        txq_tokens = sum(r["input_tokens"] + r["output_tokens"] for r in days)
        txq_cost = sum(r["cost_usd"] or 0 for r in days)
        cc = None
        if ccusage:
            _, _, code, out, _ = run([ccusage] + q[2] + ["--json"], env, capture=True)
            if code == 0:
                totals = json.loads(out)["totals"]
                cc = (totals["totalTokens"], totals.get("totalCost", totals.get("costUSD")))
        checks.append((q[0], txq_tokens, txq_cost, cc))
    return rows, checks


def fmt_s(v):
    return v if isinstance(v, str) else f"{v:.3f}"


def ratio(a, b):
    return f"{a / b:.2f}" if isinstance(a, float) and isinstance(b, float) and b > 0 else "n/a"


def home_section(home, facts, rows, checks, args):
    files, total = facts["all"]
    lines = [f"### {total / 1e9:.2f} GB home", ""]
    lines.append(f"Home: {home}, {files} files, {total / 1e9:.2f} GB: "
                 + "; ".join(f"{k} {f} files, {b / 1e9:.2f} GB" for k, (f, b) in facts["parts"].items())
                 + f". Median of {args.runs} interleaved runs after one warm-up run each; MB is the largest "
                 "peak RSS of those runs; page cache warm. Load average (1 min) "
                 f"{facts['load'][0]:.2f} as this home began, {facts['load'][1]:.2f} as it ended.")
    lines.append("")
    lines.append("| question | txq warm s | txq first s | ccusage s | warm / ccusage | first / ccusage | first / warm "
                 "| txq warm MB | txq first MB | ccusage MB |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        w, f = r["txq warm"], r["txq first"]
        c = r.get("ccusage", ("n/a", None))
        lines.append(f"| {r['name']} | {fmt_s(w[0])} | {fmt_s(f[0])} | {fmt_s(c[0])} | {ratio(w[0], c[0])} | "
                     f"{ratio(f[0], c[0])} | {ratio(f[0], w[0])} | {w[1]:.0f} | {f[1]:.0f} | "
                     f"{'n/a' if c[1] is None else f'{c[1]:.0f}'} |")
    lines.append("")
    lines.append("Totals of each `daily` (one `--json` run each; txq's tokens are input, cache reads and writes "
                 "included, plus output; ccusage's are its `totalTokens`):")
    lines.append("")
    lines.append("| daily of | txq tokens | ccusage tokens | txq $ | ccusage $ |")
    lines.append("|---|---|---|---|---|")
    for name, tt, tc, cc in checks:
        name = name.removeprefix("daily, ")
        if cc is None:
            lines.append(f"| {name} | {tt} | n/a | {tc:.2f} | n/a |")
        else:
            lines.append(f"| {name} | {tt} | {cc[0]} | {tc:.2f} | {cc[1]:.2f} |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--txq", required=True, help="the txq binary (release build)")
    ap.add_argument("--home", action="append", default=[], required=True,
                    help="a generated harness home (repeat for several sizes, smallest first)")
    ap.add_argument("--runs-per-harness", type=int, action="append", default=[],
                    help="generate a missing --home with `txq generate --harness all --runs N`: once for "
                    "every home, or once per --home in order")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of each tool per question")
    ap.add_argument("--results", help="replace the section of this Markdown file (RESULTS.md)")
    ap.add_argument("--command", help="the command line to record (default: this script's)")
    ap.add_argument("--note", help="a sentence to record under the command (e.g. which build this baseline is)")
    ap.add_argument("--cache-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                                                         "harness-txq-cache"),
                    help="where txq's warm and first-run caches go (emptied here)")
    args = ap.parse_args()
    args.txq = os.path.abspath(args.txq)
    command = args.command or "python3 " + " ".join(shlex.quote(a) for a in sys.argv)
    rph = args.runs_per_harness
    if len(rph) not in (0, 1, len(args.home)):
        sys.exit("--runs-per-harness: give it once, or once per --home")
    for i, home in enumerate(args.home):
        ensure_home(home, rph[0] if len(rph) == 1 else (rph[i] if rph else None), args.txq)

    ccusage = find_ccusage()
    launcher = None
    if ccusage:
        launcher = statistics.median(run([ccusage, "--version"], os.environ)[0] for _ in range(5))
    section = [HEADING, ""]
    section.append(f"Written by `benchmarks/harness.py`; run on {datetime.date.today().isoformat()} with: "
                   f"`{command}`.")
    if args.note:
        section.append("")
        section.append(args.note)
    section.append("")
    section.append(f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}. "
                   f"txq: {version_of([args.txq, '--version'])} ({args.txq}); "
                   + (f"{version_of([ccusage, '--version'])} ({ccusage}), `--offline`; its `ccusage` "
                      f"command is a Node launcher that spawns a native binary: `ccusage --version` takes "
                      f"{launcher:.3f} s, inside every ccusage time below."
                      if ccusage else "ccusage not found and npm missing: ccusage columns are n/a."))
    section.append("")
    section.append("txq warm: `TXQ_CACHE_DIR` filled by an earlier run; txq first: an empty `TXQ_CACHE_DIR` "
                   "before every run. ccusage keeps no cache. `daily` compares each tool's report of one harness "
                   "(txq over its folders, `ccusage <agent> daily`) and of all three (txq over the home, "
                   "`ccusage daily`). ccusage's `blocks` covers Claude Code only, so its row times txq's blocks "
                   "over the Claude Code folders; txq's blocks of all three has no ccusage counterpart. The SQL "
                   "row has none either (ccusage answers only its reports): its ccusage cells are n/a, and "
                   "ccusage's nearest report, `daily` of all agents, is the `daily, all three` row.")
    section.append("")
    for home in args.home:
        parts = {k: tree_facts(v) for k, v in harness_paths(home).items()}
        facts = {"all": tree_facts([home]), "parts": parts, "load": [os.getloadavg()[0]]}
        rows, checks = bench_home(home, args, ccusage, args.cache_dir)
        facts["load"].append(os.getloadavg()[0])
        part = home_section(home, facts, rows, checks, args)
        print("\n".join(part), flush=True)
        section += part + [""]
        # Written after each home, so that a later failure loses only what was not run.
        if args.results:
            replace_section(args.results, HEADING, section)


if __name__ == "__main__":
    main()
