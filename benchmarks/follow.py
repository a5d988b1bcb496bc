#!/usr/bin/env python3
"""Following a growing corpus: how long after an agent appends a line `txq --follow` prints its row,
against what seeing it costs without a follow (the same statement run again by txq, with its cache,
and by DuckDB), and what the follow holds in memory. Writes the section "## Following a growing
corpus" of benchmarks/RESULTS.md.

Usage: benchmarks/follow.py --corpus DIR --txq BIN [--rounds N] [--results FILE] [--command TEXT]

Each round appends one assistant line to one session file of the corpus (the file is cut back to
its size at the end) and reads the follow's stdout until that line's row is there.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import queue

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import files_of, measured, replace_section  # noqa: E402

SQL = "select file, line, uuid from claude.assistant where uuid like 'follow-%'"
DUCKDB = ("select filename, json->>'$.uuid' from read_json_objects('{glob}', format='newline_delimited', "
          "ignore_errors=true, filename=true) where json->>'$.type' = 'assistant' "
          "and json->>'$.uuid' like 'follow-%'")


def line(n, session):
    return json.dumps({
        "type": "assistant", "uuid": f"follow-{n}", "sessionId": session, "isSidechain": False,
        "timestamp": "2026-11-30T09:00:00.000Z",
        "message": {"id": f"msg_follow_{n}", "model": "claude-sonnet-4-6", "role": "assistant",
                    "content": [{"type": "text", "text": "followed"}],
                    "usage": {"input_tokens": 1, "output_tokens": 1}},
    }) + "\n"


def append(path, text):
    with open(path, "a") as f:
        f.write(text)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", required=True)
    p.add_argument("--txq", required=True)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--results")
    p.add_argument("--command", default="")
    args = p.parse_args()
    files = files_of(args.corpus)
    total = sum(os.path.getsize(f) for f in files)
    target = files[len(files) // 2]
    session = os.path.basename(target)[: -len(".jsonl")]
    size = os.path.getsize(target)
    glob = os.path.join(args.corpus, "**", "*.jsonl")
    try:
        append(target, line(0, session))
        # What seeing a new row costs without a follow: the statement run again.
        rerun = [args.txq, "-q", "--format", "ndjson", "-e", SQL, args.corpus]
        duck = [sys.executable, "-c", "import duckdb,sys; c=duckdb.connect(); c.execute(\"SET threads=2\"); "
                "print(c.execute(sys.argv[1]).fetchall())", DUCKDB.format(glob=glob)]
        measured(rerun)  # warms the page cache and txq's inference cache
        txq_runs = [measured(rerun)[0] for _ in range(3)]
        measured(duck)
        duck_runs = [measured(duck)[0] for _ in range(3)]

        start = time.perf_counter()
        proc = subprocess.Popen([args.txq, "-q", "--follow", "--format", "ndjson", "-e", SQL, args.corpus],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        rows = queue.Queue()
        threading.Thread(target=lambda: [rows.put(l) for l in proc.stdout], daemon=True).start()

        def until(marker):
            while True:
                got = rows.get(timeout=120)
                if marker in got:
                    return

        until("follow-0")
        first = time.perf_counter() - start
        latencies = []
        for n in range(1, args.rounds + 1):
            time.sleep(0.3)
            t0 = time.perf_counter()
            append(target, line(n, session))
            until(f"follow-{n}\"")
            latencies.append(time.perf_counter() - t0)
        with open(f"/proc/{proc.pid}/status") as f:
            hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) / 1024
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
        if code != 0:
            sys.exit(f"txq --follow ended with {code}: {proc.stderr.read()[-2000:]}")
    finally:
        os.truncate(target, size)

    med = statistics.median
    lines = [
        "## Following a growing corpus",
        "",
        f"Run on {time.strftime('%Y-%m-%d')} with: `{args.command or 'benchmarks/follow.py'}`.",
        f"Corpus: {len(files)} files, {total / 1e9:.2f} GB ({args.corpus}); page cache warm. "
        f"Statement: `{SQL}`. Each of {args.rounds} rounds appends one assistant line to one session "
        "file and waits for its row; the statement run again is timed 3 times after a warm-up.",
        "",
        "| what | s |",
        "|---|---|",
        f"| `txq --follow`: the rows there (start, inference cache warm) | {first:.3f} |",
        f"| `txq --follow`: append to row printed, median | {med(latencies):.3f} |",
        f"| `txq --follow`: append to row printed, slowest | {max(latencies):.3f} |",
        f"| `txq -e` run again (cache warm), median | {med(txq_runs):.3f} |",
        f"| DuckDB run again, median | {med(duck_runs):.3f} |",
        "",
        f"A new row reaches the follow in {med(latencies) / med(duck_runs):.3f}× the time DuckDB takes to "
        f"find it again ({med(latencies) / med(txq_runs):.3f}× txq's own run again). "
        f"The follow's peak RSS: {hwm:.0f} MB.",
    ]
    print("\n".join(lines))
    if args.results:
        replace_section(args.results, "## Following a growing corpus", lines)


if __name__ == "__main__":
    main()
