#!/usr/bin/env python3
"""`txq statusline` alone, N lines one after another on the home of benchmarks/statusline.py,
its live file grown by a response before each (as that benchmark does), with no ccusage between
runs: for profiling, not for RESULTS.md. Prints the last line and the median and slowest time.

Usage: benchmarks/statusline_alone.py TXQ RUNS [--home DIR] [--cache DIR]"""
import argparse
import datetime
import json
import os
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
args = ap.parse_args()
home = os.path.abspath(args.home)
s.ensure_home(home, "1GB", args.txq)
live_dir = os.path.join(home, ".claude", "projects", s.LIVE_FOLDER)
os.makedirs(live_dir, exist_ok=True)
live = os.path.join(live_dir, s.LIVE_SESSION + ".jsonl")
if not os.path.exists(live):
    open(live, "w").close()
s.settle_home(home)
s.settle_folders(home)
env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CONFIG_DIR"}
env.update(HOME=home, TZ="UTC", NO_COLOR="1", TXQ_CACHE_DIR=args.cache)
hook = json.dumps({"session_id": s.LIVE_SESSION, "transcript_path": live,
                   "model": {"id": "claude-sonnet-4-6", "display_name": "Sonnet 4.6"},
                   "context_window": {"context_window_size": 200000}})
first = sum(1 for _ in open(live))
times = []
out = ""
for i in range(args.runs):
    with open(live, "a") as f:
        f.write(s.response_line(first + i + 1, datetime.datetime.now(datetime.timezone.utc)))
    sec, _, code, out = s.run([args.txq, "-q", "statusline"], env, hook)
    times.append(sec * 1000)
print(out.strip())
print("median %.1f ms, slowest %.1f ms, fastest %.1f ms of %d" % (statistics.median(times), max(times), min(times), args.runs))
