#!/usr/bin/env python3
"""txq against DuckDB and jq on the same transcripts: median wall time and peak RSS per question.

Every question runs through each engine RUNS times, interleaved (txq, DuckDB, jq, txq, ...), each
run a fresh process whose peak RSS is read from wait4(). The byte-scan floor (`wc -l` over the files,
one process per core through `xargs -P`, no pipe) runs the same way. On the smallest corpus, the stream check writes `select * from events` in every
output format to /dev/null and reads txq's peak RSS, which must stay under STREAM_LIMIT_MB (the
output is larger than that: only streaming keeps it there). Results print as a table and are
written to RESULTS.md with the machine, the corpus and the command. Numbers come from this run
only. `--stream-only` runs the stream check alone and only prints it.
"""

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time

QUESTIONS = [
    {
        "name": "tokens by model",
        "txq": "select model, sum(input_tokens) as i, sum(output_tokens) as o from usage group by model order by model",
        "duckdb": "select data->>'model' as model, sum((data->>'input_tokens')::bigint) as i, "
        "sum((data->>'output_tokens')::bigint) as o from {src} where type = 'usage' group by 1 order by 1",
        "jq": 'reduce (EVENTS | select(.type == "usage") | .data) as $d ({}; .[$d.model] |= '
        '{i: ((.i // 0) + $d.input_tokens), o: ((.o // 0) + $d.output_tokens)})',
    },
    {
        "name": "events by type",
        "txq": "select type, count(*) as n from events group by type order by type",
        "duckdb": "select type, count(*) as n from {src} group by type order by type",
        "jq": "reduce (EVENTS | .type | tostring) as $t ({}; .[$t] += 1)",
    },
    {
        # Needs every line's fields: no count can answer it, so it shows the scan itself.
        "name": "events and data bytes by type (full scan)",
        "txq": "select type, count(*) as n, sum(length(data)) as b from events group by type order by type",
        "duckdb": "select type, count(*) as n, sum(length(data::varchar)) as b from {src} group by type order by type",
        "jq": None,
    },
    {
        "name": "bytes by host",
        "txq": "select host, sum(bytes_in) as b from net_flow group by host order by host",
        "duckdb": "select data->'flow'->>'host' as host, sum((data->'flow'->>'bytes_in')::bigint) as b "
        "from {src} where type = 'net_flow' group by 1 order by 1",
        "jq": 'reduce (EVENTS | select(.type == "net_flow") | .data.flow) as $f ({}; .[$f.host] += ($f.bytes_in // 0))',
    },
    {
        "name": "failed tools (join)",
        "txq": "select c.tool, count(*) as n from tool_call c join tool_result r "
        "on r.call_id = c.call_id and r.file = c.file where r.error is not null group by c.tool order by c.tool",
        "duckdb": "with t as (select type, data, filename from {srcf} where type in ('tool_call', 'tool_result')) "
        "select c.data->>'tool' as tool, count(*) as n from t c join t r on r.filename = c.filename "
        "and r.data->>'call_id' = c.data->>'call_id' and r.type = 'tool_result' "
        "where c.type = 'tool_call' and r.data->>'error' is not null group by 1 order by 1",
        "jq": None,
    },
    {
        "name": "runs by status",
        "txq": "select status, count(*) as n from runs group by status order by status",
        "duckdb": "with s as (select filename from {srcf} where type = 'run_start'), "
        "c as (select filename, data->>'status' as status from {srcf} where type = 'run_complete') "
        "select coalesce(c.status, 'aborted') as status, count(*) as n from s left join c using (filename) "
        "group by 1 order by 1",
        "jq": None,
    },
    {
        "name": "one run (selective)",
        "txq": "select count(*) as n, sum(output_tokens) as o from usage where run_id = '{run_id}'",
        "duckdb": "select count(*) as n, sum((data->>'output_tokens')::bigint) as o from {srcf} "
        "where type = 'usage' and filename like '%{run_id}.jsonl'",
        "jq": None,
    },
]


# The stream check: every format, and the peak RSS each must stay under.
STREAM_SQL = "select * from events"
STREAM_FORMATS = ["table", "csv", "tsv", "json", "ndjson"]
STREAM_LIMIT_MB = 150
# The byte-scan floor reads the files with one wc process per core.
CORES = os.cpu_count() or 1


# Over a Claude Code home: the normalized calls, each response counted once with its fullest
# copy's figures. DuckDB runs the same dedupe (docs/harnesses.md) over the JSON of every line.
CLAUDE_QUESTIONS = [
    {
        "name": "calls by model (dedupe)",
        "txq": "select model, count(*) as calls, sum(input_tokens) as i, sum(output_tokens) as o "
        "from calls group by model order by model",
        "duckdb": "with a as (select json->>'$.sessionId' as s, json->>'$.message.id' as m, "
        "json->>'$.message.model' as model, coalesce((json->>'$.isSidechain')::boolean, false) as sc, "
        "coalesce((json->>'$.message.usage.input_tokens')::bigint, 0) "
        "+ coalesce((json->>'$.message.usage.cache_creation_input_tokens')::bigint, 0) "
        "+ coalesce((json->>'$.message.usage.cache_read_input_tokens')::bigint, 0) as i, "
        "coalesce((json->>'$.message.usage.output_tokens')::bigint, 0) as o, filename "
        "from {objects} where json->>'$.type' = 'assistant'), "
        "d as (select model, i, o, row_number() over (partition by s, m order by o desc, sc, filename) as nth "
        "from a where m is not null and s is not null and model is not null and model <> '<synthetic>') "
        "select model, count(*) as calls, sum(i) as i, sum(o) as o from d where nth = 1 group by 1 order by 1",
        "jq": None,
    },
]


def measured_to_null(cmd):
    """Runs cmd with stdout to /dev/null; returns (seconds, peak MB)."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(cmd, stdout=null, stderr=subprocess.PIPE)
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"failed ({code}): {' '.join(cmd[:6])} ...\n{err.decode(errors='replace')[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024.0


def stream_check(corpus, args):
    """`select * from events` in every format to /dev/null: (format, median s, max peak MB) each."""
    rows = []
    for fmt in STREAM_FORMATS:
        cmd = [args.txq, "-q", "--format", fmt, "-e", STREAM_SQL, corpus]
        measured_to_null(cmd)  # warms the page cache and the inference cache
        runs = [measured_to_null(cmd) for _ in range(args.runs)]
        rows.append((fmt, statistics.median(t for t, _ in runs), max(m for _, m in runs)))
        print(f"stream {fmt}: {rows[-1][1]:.3f}s, {rows[-1][2]:.0f} MB", flush=True)
    return rows


def stream_section(corpus, rows, runs):
    lines = ["## Output that streams", ""]
    lines.append(f"`txq -q --format F -e \"{STREAM_SQL}\"` over {corpus}, stdout to /dev/null; median time "
                 f"and largest peak RSS of {runs} runs after one warm-up run; every format must stay under "
                 f"{STREAM_LIMIT_MB} MB.")
    lines.append("")
    lines.append("| format | s | peak MB | under " + str(STREAM_LIMIT_MB) + " MB |")
    lines.append("|---|---|---|---|")
    for fmt, t, m in rows:
        lines.append(f"| {fmt} | {t:.3f} | {m:.0f} | {'yes' if m < STREAM_LIMIT_MB else 'NO'} |")
    return lines


def measured(cmd):
    """Runs cmd under wait4 to read its own peak RSS; returns (seconds, MB, stdout)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd[:6])} ...\n{err.decode(errors='replace')[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024.0, out


def files_of(root):
    out = []
    for d, _, names in os.walk(root):
        out.extend(os.path.join(d, n) for n in names if n.endswith(".jsonl"))
    return sorted(out)


def bench_corpus(corpus, args, questions=QUESTIONS):
    """Runs every question on one corpus; returns its facts and a row per question."""
    files = files_of(corpus)
    total_bytes = sum(os.path.getsize(f) for f in files)
    run_id = os.path.basename(files[len(files) // 2])[: -len(".jsonl")]
    glob = os.path.join(corpus, "**", "*.jsonl")
    read = "read_ndjson('{g}', columns={{'type': 'VARCHAR', 'data': 'JSON'}}, ignore_errors=true{f})"
    src, srcf = read.format(g=glob, f=""), read.format(g=glob, f=", filename=true")
    objects = f"read_json_objects('{glob}', format='newline_delimited', ignore_errors=true, filename=true)"
    with_jq = total_bytes / 1e9 <= args.jq_up_to_gb

    def engines(q):
        sql = q["txq"].format(run_id=run_id)
        out = {
            "txq": [args.txq, "-q", "--format", "csv", "-e", sql, corpus],
            "txq --no-cache": [args.txq, "-q", "--no-cache", "--format", "csv", "-e", sql, corpus],
            "duckdb": [sys.executable, "-c",
                       "import duckdb,sys; c=duckdb.connect(); c.execute(\"SET threads=2\"); "
                       "print(c.execute(sys.argv[1]).fetchall())",
                       q["duckdb"].format(src=src, srcf=srcf, run_id=run_id, objects=objects)],
        }
        if q["jq"] and with_jq:
            # Each line parsed on its own, so that a damaged line is skipped instead of ending jq.
            events = "(inputs | (try fromjson catch empty) | objects)"
            out["jq"] = ["jq", "-R", "-n", "-c", q["jq"].replace("EVENTS", events)] + files
        return out

    results = []
    for q in questions:
        times, rss = {}, {}
        # One untimed run each warms the page cache (and txq's inference cache).
        for cmd in engines(q).values():
            measured(cmd)
        for _ in range(args.runs):
            for name, cmd in engines(q).items():
                t, m, _ = measured(cmd)
                times.setdefault(name, []).append(t)
                rss.setdefault(name, []).append(m)
        results.append((q["name"], {n: statistics.median(v) for n, v in times.items()},
                        {n: max(v) for n, v in rss.items()}))
        print(f"{q['name']}: " + ", ".join(f"{n} {statistics.median(v):.3f}s" for n, v in times.items()), flush=True)
    # The file list goes through xargs: tens of thousands of paths overflow one command line.
    listing = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "files.list")
    with open(listing, "wb") as f:
        f.write(b"\0".join(p.encode() for p in files))
    floor = []
    for _ in range(args.runs):
        t, _, _ = measured(["sh", "-c", 'xargs -0 -P "$2" wc -l < "$1" > /dev/null', "sh", listing, str(CORES)])
        floor.append(t)
    facts = {"corpus": corpus, "files": len(files), "bytes": total_bytes, "floor": statistics.median(floor),
             "jq": with_jq}
    return facts, results


def corpus_section(facts, results, runs, title=None):
    gb, floor_s = facts["bytes"] / 1e9, facts["floor"]
    lines = [f"## {title or ''}{gb:.2f} GB", ""]
    lines.append(f"Corpus: {facts['files']} files, {gb:.2f} GB ({facts['corpus']}); "
                 f"median of {runs} interleaved runs after one warm-up run each; page cache warm"
                 + ("." if facts["jq"] else "; jq not run at this size (--jq-up-to-gb)."))
    lines.append(f"Byte-scan floor (`wc -l` over the files, {CORES} processes at once, one per core): "
                 f"{floor_s:.3f} s ({gb / floor_s:.2f} GB/s).")
    lines.append("")
    lines.append("| question | txq s | txq --no-cache s | DuckDB s | jq s | txq / DuckDB | txq / floor | txq MB | txq --no-cache MB | DuckDB MB | jq MB |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, t, m in results:
        jq_t = f"{t['jq']:.3f}" if "jq" in t else "n/a"
        jq_m = f"{m['jq']:.0f}" if "jq" in m else "n/a"
        lines.append(f"| {name} | {t['txq']:.3f} | {t['txq --no-cache']:.3f} | {t['duckdb']:.3f} | {jq_t} | "
                     f"{t['txq'] / t['duckdb']:.2f} | {t['txq'] / floor_s:.2f} | {m['txq']:.0f} | "
                     f"{m['txq --no-cache']:.0f} | {m['duckdb']:.0f} | {jq_m} |")
    return lines


def scaling_section(measured_corpora):
    """txq's time and peak RSS at each size against the smallest: linear time is the bytes' ratio."""
    (base_facts, base), rest = measured_corpora[0], measured_corpora[1:]
    lines = ["## Scaling", ""]
    for facts, results in rest:
        ratio = facts["bytes"] / base_facts["bytes"]
        lines.append(f"{facts['bytes'] / 1e9:.2f} GB against {base_facts['bytes'] / 1e9:.2f} GB: "
                     f"{ratio:.2f}x the bytes (floor {facts['floor'] / base_facts['floor']:.2f}x).")
        lines.append("")
        lines.append("| question | txq time ratio | txq --no-cache time ratio | DuckDB time ratio | txq MB | txq --no-cache MB |")
        lines.append("|---|---|---|---|---|---|")
        for (name, t0, m0), (_, t1, m1) in zip(base, results):
            lines.append(f"| {name} | {t1['txq'] / t0['txq']:.2f} | {t1['txq --no-cache'] / t0['txq --no-cache']:.2f} | "
                         f"{t1['duckdb'] / t0['duckdb']:.2f} | {m0['txq']:.0f} → {m1['txq']:.0f} | "
                         f"{m0['txq --no-cache']:.0f} → {m1['txq --no-cache']:.0f} |")
        lines.append("")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", action="append", default=[],
                    help="a transcripts directory (repeat for several sizes, smallest first)")
    ap.add_argument("--claude-corpus",
                    help="a generated Claude Code home: the calls question runs on it, and its section of "
                    "RESULTS.md is written (alone, when no --corpus is given: the other sections are kept)")
    ap.add_argument("--txq", required=True, help="the txq binary (release build)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--jq-up-to-gb", type=float, default=2.0,
                    help="run jq only on corpora up to this size (it takes minutes a gigabyte)")
    ap.add_argument("--results", help="write RESULTS.md here")
    ap.add_argument("--command", default="", help="the command line to record in RESULTS.md")
    ap.add_argument("--stream-only", action="store_true",
                    help="run only the stream check, on the first corpus, and print it (RESULTS.md untouched)")
    args = ap.parse_args()
    os.environ["TXQ_CACHE_DIR"] = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "txq-cache")

    if args.stream_only:
        rows = stream_check(args.corpus[0], args)
        print("\n".join(stream_section(args.corpus[0], rows, args.runs)))
        return
    if args.claude_corpus:
        facts, results = bench_corpus(args.claude_corpus, args, CLAUDE_QUESTIONS)
        section = corpus_section(facts, results, args.runs, title="Claude Code home, ")
        section.insert(2, f"Run on {datetime.date.today().isoformat()} with: `{args.command}`.")
        print("\n".join(section))
        if args.results:
            replace_section(args.results, "## Claude Code home, ", section)
    measured_corpora = []
    stream = None
    for corpus in args.corpus:
        measured_corpora.append(bench_corpus(corpus, args))
        if stream is None:
            stream = (corpus, stream_check(corpus, args))
        # Written after each corpus, so that a later failure loses only what was not run.
        write_results(measured_corpora, args, stream)


def replace_section(path, heading, section):
    """Puts `section` in the file at `path` in place of the section whose heading starts so (at the end
    when there is none), keeping every other section."""
    text = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
    lines = text.rstrip("\n").split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith(heading)), None)
    if start is None:
        lines += [""] + section
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        lines[start:end] = section + [""]
    with open(path, "w") as f:
        f.write("\n".join(lines).rstrip("\n") + "\n")


def write_results(measured_corpora, args, stream=None):
    lines = [f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}; "
             f"DuckDB {__import__('duckdb').__version__} (threads=2), "
             f"{subprocess.run(['jq', '--version'], capture_output=True, text=True).stdout.strip()}.", ""]
    for facts, results in measured_corpora:
        lines += corpus_section(facts, results, args.runs) + [""]
    if args.results and os.path.exists(args.results):
        # The Claude Code section is written by its own run: kept as it is.
        old = open(args.results).read().split("\n")
        start = next((i for i, l in enumerate(old) if l.startswith("## Claude Code home, ")), None)
        if start is not None:
            end = next((i for i in range(start + 1, len(old)) if old[i].startswith("## ")), len(old))
            lines += old[start:end] + [""]
    if len(measured_corpora) > 1:
        lines += scaling_section(measured_corpora)
    if stream is not None:
        lines += [""] + stream_section(stream[0], stream[1], args.runs)
    table = "\n".join(lines).rstrip()
    print(table)
    if args.results:
        with open(args.results, "w") as f:
            f.write("# Benchmark results\n\n")
            f.write("Written by `benchmarks/bench.py` (which `benchmarks/run.sh` runs); never edit the figures by hand.\n\n")
            f.write(f"Run on {datetime.date.today().isoformat()} with: `{args.command}`\n\n")
            f.write(table + "\n")


if __name__ == "__main__":
    main()
