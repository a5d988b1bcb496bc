#!/usr/bin/env python3
"""`txq statusline` against `ccusage statusline` on a generated Claude Code home: the time of each
line, as Claude Code runs the command after every message.

The home is what `txq generate --harness claude --size SIZE --seed 7` writes (1 GB by default,
the issue's home), made a home as it is at the time of the run: the generator spreads its sessions
over the 21 months from 2026-09-02, so every `"timestamp"` of every file is moved back by one
span (the same for all, a whole number of days) that puts the home's last line an hour before now,
and each file gets the time of its last line as its modification time (a file was last written
when its session's last line was), and each folder the time of the latest thing in it (not the
hour the generator made it: a folder's time is when a name was last made in it); plus
one live session: before every run a new response is appended to its file, with the time of the
run, as Claude Code appends one after each message; the hook's JSON names that session and file. Each run is a fresh process fed the hook's JSON on stdin, stdout to a
pipe, its peak RSS read from wait4() (for ccusage, whose `ccusage` command is a Node launcher that
spawns a native binary, the largest process of the tree). Runs are interleaved in rounds (ccusage
--no-cache, ccusage with its cache, txq, txq, ...) after one untimed warm-up of each, which fills txq's
inference cache and memo (`--no-cache` runs of txq are not timed: the warm cache is the case the
50 ms goal is set for). A round is one run of each ccusage command, then --txq-per-round runs of
txq one after another, as Claude Code runs it message after message: 30 rounds give txq 210
lines, enough for a 99th percentile that is not simply the slowest run, and every round's first
txq line comes straight after a ccusage run of 8 s and 636 MB (those lines are also shown apart,
`txq, first after ccusage`). Both run with HOME=<home>, TZ=UTC, NO_COLOR=1 and CLAUDE_CONFIG_DIR unset;
ccusage with --offline. Reported: median, 99th percentile and largest time, and the largest peak
RSS, of each; and the lines each printed last, for a look (not judged: ccusage's figures are its
own, docs/harnesses.md says where they differ).

The page cache is kept warm: where the kernel runs DAMON with a page-out scheme (our machines page
out file pages not touched for 6 s, so that txq's binary, memo and cache leave memory during one
ccusage run of 8 s), it is turned off for the run and on again after, and the results say so;
`--keep-damon` leaves it as it is.

The section `## Status line against ccusage` of --results is replaced (the other sections are
kept). Numbers come from this run only. If ccusage is not on PATH the script installs ccusage
20.0.24 with npm; without npm its columns are n/a.

Usage: benchmarks/statusline.py --txq target/release/txq [--home benchmarks/data/statusline]
         [--size 1GB] [--runs 30] [--txq-per-round 7] [--results benchmarks/RESULTS.md]
         [--command STR]
"""

import argparse
import datetime
import glob
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import replace_section  # noqa: E402
from harness import find_ccusage, tree_facts, version_of  # noqa: E402

HEADING = "## Status line against ccusage"
LIVE_SESSION = "5e55f00d-0000-4000-8000-000000000001"
LIVE_FOLDER = "-home-ana-src-live"


def response_line(n, when):
    """One assistant line of a response, as Claude Code writes it."""
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    return json.dumps({
        "parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/ana/src/live",
        "sessionId": LIVE_SESSION, "version": "2.1.90", "gitBranch": "main", "type": "assistant",
        "requestId": f"req_live{n:08d}",
        "message": {"id": f"msg_live{n:08d}", "type": "message", "role": "assistant",
                    "model": "claude-sonnet-4-6", "stop_reason": "end_turn",
                    "content": [{"type": "text", "text": "done"}],
                    "usage": {"input_tokens": 12, "cache_creation_input_tokens": 900,
                              "cache_read_input_tokens": 40000 + 300 * n, "output_tokens": 250}},
        "uuid": f"00000000-0000-4000-8000-{n:012d}", "timestamp": stamp,
    }) + "\n"


def ensure_home(home, size, txq):
    if os.path.isdir(home):
        return
    cmd = [txq, "generate", "-q", "--out", home, "--harness", "claude", "--size", size, "--seed", "7"]
    print("generating: " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True)


TIMESTAMP = re.compile(rb'"timestamp":"([0-9T:.\-]+)Z"')


def settle_home(home):
    """Makes `home` a home as of now: every timestamp moved back by whole days, so that the last
    line is an hour or more before now, and each file's times those of its last line. Done once:
    a file `.settled-v3` says so. The timestamps keep their length (the files keep their sizes)."""
    mark = os.path.join(home, ".settled-v3")
    if os.path.exists(mark):
        return
    paths = [os.path.join(d, n) for d, _, names in os.walk(home) for n in names]
    latest = None
    for path in paths:
        with open(path, "rb") as f:
            for t in TIMESTAMP.findall(f.read()):
                when = datetime.datetime.fromisoformat(t.decode())
                latest = when if latest is None or when > latest else latest
    if latest is None:
        sys.exit(f"{home}: no timestamps to settle")
    cutoff = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) - datetime.timedelta(hours=1)
    shift = datetime.timedelta(days=max(0, (latest - cutoff).days + 1))

    def moved(match):
        text = match.group(1).decode()
        when = datetime.datetime.fromisoformat(text) - shift
        out = when.strftime("%Y-%m-%dT%H:%M:%S")
        if "." in text:
            digits = len(text.split(".", 1)[1])
            out += "." + f"{when.microsecond:06d}"[:digits]
        return b'"timestamp":"' + out.encode() + b'Z"'

    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        stamps = TIMESTAMP.findall(data)
        if not stamps:
            continue
        data = TIMESTAMP.sub(moved, data)
        with open(path, "wb") as f:
            f.write(data)
        last = max(datetime.datetime.fromisoformat(t.decode()) for t in stamps) - shift
        when = last.replace(tzinfo=datetime.timezone.utc).timestamp()
        os.utime(path, (when, when))
    open(mark, "w").close()


def settle_folders(home):
    """Gives each folder of `home` the time of the latest thing in it, as a home that grew over
    months has (a folder's time is when a name was last made in it), not the hour the generator
    made them all; a file with no timestamp to settle by (a subagent's `.meta.json`) gets the time
    of the latest transcript beside it. Done once, after `settle_home`: a file `.settled-folders`
    says so."""
    mark = os.path.join(home, ".settled-folders")
    if os.path.exists(mark):
        return
    for folder, dirs, names in os.walk(home, topdown=False):
        if folder == home:
            continue
        times = {n: os.stat(os.path.join(folder, n), follow_symlinks=False).st_mtime for n in dirs + names}
        unsettled = [n for n in names if not n.endswith(".jsonl")]
        settled = [t for n, t in times.items() if n not in unsettled]
        if settled:
            for n in unsettled:
                os.utime(os.path.join(folder, n), (max(settled), max(settled)))
                times[n] = max(settled)
        if times:
            os.utime(folder, (max(times.values()), max(times.values())))
    open(mark, "w").close()


DAMON = "/sys/kernel/mm/damon/admin/kdamonds"


def damon_pageouts():
    """The kernel's DAMON monitors that are on with a scheme paging memory out (a machine of
    ours pages out file pages not touched for 6 s: a page cache that does not stay warm)."""
    found = []
    for kdamond in sorted(glob.glob(os.path.join(DAMON, "[0-9]*"))):
        try:
            on = open(os.path.join(kdamond, "state")).read().strip() == "on"
            actions = [open(a).read().strip() for a in glob.glob(os.path.join(kdamond, "contexts/*/schemes/*/action"))]
        except OSError:
            continue
        if on and "pageout" in actions:
            found.append(kdamond)
    return found


def set_damon(kdamonds, state):
    """Turns the monitors `kdamonds` on or off; those it could turn."""
    turned = []
    for kdamond in kdamonds:
        try:
            with open(os.path.join(kdamond, "state"), "w") as f:
                f.write(state)
            turned.append(kdamond)
        except OSError:
            pass
    return turned


def run(cmd, env, stdin):
    """Runs cmd with `stdin`; returns (seconds, peak MB, exit code, stdout)."""
    with tempfile.TemporaryFile() as inp, tempfile.TemporaryFile() as out, open(os.devnull, "wb") as null:
        inp.write(stdin.encode())
        inp.seek(0)
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=inp, stdout=out, stderr=null, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        out.seek(0)
        return elapsed, usage.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status), out.read().decode(errors="replace")


def percentile(values, p):
    ordered = sorted(values)
    at = min(len(ordered) - 1, max(0, int(round(p / 100.0 * len(ordered) + 0.5)) - 1))
    return ordered[at]


def prepared_home(home, size, txq, fresh_live):
    """The home generated where missing, its live session's file there (emptied with
    `fresh_live`), settled (`settle_home`, `settle_folders`): the live file's path."""
    ensure_home(home, size, txq)
    live_dir = os.path.join(home, ".claude", "projects", LIVE_FOLDER)
    os.makedirs(live_dir, exist_ok=True)
    live = os.path.join(live_dir, LIVE_SESSION + ".jsonl")
    if fresh_live or not os.path.exists(live):
        open(live, "w").close()
    settle_home(home)
    settle_folders(home)
    return live


def environment(home, cache):
    """The environment every run has: HOME at the home, UTC, no color, no CLAUDE_CONFIG_DIR, and
    txq's cache in `cache`."""
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CONFIG_DIR"}
    env.update(HOME=os.path.abspath(home), TZ="UTC", NO_COLOR="1", TXQ_CACHE_DIR=cache)
    return env


def hook_of(live):
    """The hook's JSON as Claude Code sends it, naming the live session and its file."""
    return json.dumps({
        "hook_event_name": "Status", "session_id": LIVE_SESSION, "transcript_path": os.path.abspath(live),
        "cwd": "/home/ana/src/live", "model": {"id": "claude-sonnet-4-6", "display_name": "Sonnet 4.6"},
        "workspace": {"current_dir": "/home/ana/src/live", "project_dir": "/home/ana/src/live"},
        "version": "2.1.90", "cost": {"total_cost_usd": 0.5},
        "context_window": {"total_input_tokens": 41000, "total_output_tokens": 2500,
                           "context_window_size": 200000, "used_percentage": 21, "remaining_percentage": 79,
                           "current_usage": {"input_tokens": 12, "output_tokens": 250,
                                             "cache_creation_input_tokens": 900,
                                             "cache_read_input_tokens": 40000}},
    })


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--txq", required=True)
    ap.add_argument("--home", default="benchmarks/data/statusline")
    ap.add_argument("--size", default="1GB")
    ap.add_argument("--runs", type=int, default=30, help="rounds")
    ap.add_argument("--results", default=None)
    ap.add_argument("--command", default=None)
    ap.add_argument("--txq-per-round", type=int, default=7,
                    help="txq's runs one after another in each round, after each ccusage command's one")
    ap.add_argument("--keep-damon", action="store_true",
                    help="leave the kernel's DAMON page-out on where it is (by default it is turned off "
                         "for the run and on again after: it empties the page cache of what was not "
                         "touched for a few seconds, and the goal is set for a warm cache)")
    args = ap.parse_args()
    paused = [] if args.keep_damon else set_damon(damon_pageouts(), "off")
    try:
        measure(args, paused)
    finally:
        set_damon(paused, "on")


def measure(args, paused):
    live = prepared_home(args.home, args.size, args.txq, fresh_live=True)
    files, total = tree_facts([args.home])
    ccusage = find_ccusage()
    env = environment(args.home, tempfile.mkdtemp(prefix="txq-statusline-cache-"))
    hook = hook_of(live)
    tools = {"txq": [args.txq, "-q", "statusline"]}
    if ccusage:
        tools["ccusage --no-cache"] = [ccusage, "statusline", "--offline", "--no-cache"]
        tools["ccusage (its cache)"] = [ccusage, "statusline", "--offline"]
    times = {k: [] for k in tools}
    rss = {k: 0.0 for k in tools}
    last = {}
    n = 0

    def once(name, timed):
        nonlocal n
        n += 1
        with open(live, "a") as f:
            f.write(response_line(n, datetime.datetime.now(datetime.timezone.utc)))
        seconds, mb, code, out = run(tools[name], env, hook)
        if code != 0:
            sys.exit(f"{name} exited {code}")
        last[name] = out.strip()
        if timed:
            times[name].append(seconds)
            rss[name] = max(rss[name], mb)
        return seconds, mb

    for name in tools:
        once(name, False)
    first_after = "txq, first after ccusage"
    times[first_after], rss[first_after] = [], 0.0
    for _ in range(args.runs):
        for name in tools:
            if name != "txq":
                once(name, True)
        for i in range(args.txq_per_round):
            seconds, mb = once("txq", True)
            if i == 0 and ccusage:
                times[first_after].append(seconds)
                rss[first_after] = max(rss[first_after], mb)
    tools[first_after] = tools["txq"]
    rows = []
    for name in tools:
        t = times[name]
        if not t:
            continue
        rows.append((name, statistics.median(t) * 1000, percentile(t, 99) * 1000, max(t) * 1000, rss[name]))
    machine = f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}"
    lines = [HEADING, ""]
    lines.append(f"Run on {datetime.date.today()} with: `{args.command or ' '.join(sys.argv)}`")
    lines.append("")
    lines.append(f"Machine: {machine}; txq {version_of([args.txq, '--version'])}; "
                 f"ccusage {version_of([ccusage, '--version']) if ccusage else 'n/a'}.")
    lines.append("")
    lines.append(f"Home: {args.home} (`txq generate --harness claude --size {args.size} --seed 7`, its "
                 f"timestamps moved back to end an hour before now), {files} files, {total / 1e9:.2f} GB of Claude Code sessions, each file's time "
                 f"its last line's and each folder's that of the latest thing in it, and one live session, a response appended to it before each run; {args.runs} rounds, "
                 f"each one run of each ccusage command and then {args.txq_per_round} runs of txq one after another, after one warm-up run of each "
                 "(`txq, first after ccusage`: the first txq run of each round, counted in `txq` too); page cache and "
                 "txq's cache warm.")
    lines.append("")
    damon = damon_pageouts()
    if paused:
        lines.append(f"The kernel's DAMON page-out ({', '.join(paused)}: file pages not touched for a few seconds "
                     "paged out) was turned off for the run and on again after: with it on, the page cache does not stay "
                     "warm through a ccusage run of several seconds (`--keep-damon` leaves it on).")
    elif damon:
        lines.append(f"The kernel's DAMON page-out was on through the run ({', '.join(damon)}): the page cache does not "
                     "stay warm through a ccusage run of several seconds.")
    lines.append("")
    lines.append("| command | median ms | p99 ms | max ms | peak MB | p99 / txq's |")
    lines.append("|---|---|---|---|---|---|")
    base = rows[0][2]
    for name, med, p99, mx, mb in rows:
        lines.append(f"| {name} | {med:.1f} | {p99:.1f} | {mx:.1f} | {mb:.0f} | {p99 / base:.2f} |")
    lines.append("")
    lines.append("The lines printed last:")
    lines.append("")
    for name in tools:
        if name != first_after:
            lines.append(f"- {name}: `{last.get(name, '')}`")
    lines.append("")
    print("\n".join(lines))
    if args.results:
        replace_section(args.results, HEADING, lines)


if __name__ == "__main__":
    main()
