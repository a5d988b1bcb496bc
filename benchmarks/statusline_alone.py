#!/usr/bin/env python3
"""`txq statusline` alone, N lines one after another on the home of benchmarks/statusline.py
(the same home, hook and live file), its live file grown by a response before each, with no
ccusage between runs: for profiling, not for RESULTS.md. Prints the last line and the median,
slowest and fastest time.

With --wrap, each run is that command's (`--wrap "valgrind --tool=callgrind"`: the
instructions of one line, the same whatever else the machine does, as ANALYSIS.md counts them).

Usage: benchmarks/statusline_alone.py TXQ RUNS [--home DIR] [--cache DIR] [--wrap COMMAND]"""
import argparse
import datetime
import os
import shlex
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import statusline as s  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("txq")
ap.add_argument("runs", type=int)
ap.add_argument("--home", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "statusline-1GB"))
ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "txq-statusline-alone-cache"))
ap.add_argument("--wrap", default="", help="a command each run is given to, before txq's")
args = ap.parse_args()
home = os.path.abspath(args.home)
live = s.prepared_home(home, "1GB", args.txq, fresh_live=False)
env = s.environment(home, args.cache)
hook = s.hook_of(live)
first = sum(1 for _ in open(live))
times = []
out = ""
for i in range(args.runs):
    with open(live, "a") as f:
        f.write(s.response_line(first + i + 1, datetime.datetime.now(datetime.timezone.utc)))
    sec, _, code, out = s.run(shlex.split(args.wrap) + [args.txq, "-q", "statusline"], env, hook)
    if code != 0:
        sys.exit(f"txq exited {code}")
    times.append(sec * 1000)
print(out.strip())
print("median %.1f ms, slowest %.1f ms, fastest %.1f ms of %d" % (statistics.median(times), max(times), min(times), args.runs))
