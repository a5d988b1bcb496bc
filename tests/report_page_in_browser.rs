//! `txq report`: the real binary writes the page of a generated corpus of every format; headless
//! Chromium opens it over the DevTools protocol (a small client here, over a websocket), and the
//! figures read from its DOM equal the same canned queries run by `txq query` and the
//! generator's tally; no console error, no request but the document, every chart its points.
//! Without Chromium the browser test is skipped, saying so, unless TXQ_REQUIRE_BROWSER=1.
//! The DevTools client below (some 200 lines: an HTTP GET of /json/list and a tungstenite
//! websocket) is kept rather than `headless_chrome` or `chromiumoxide`, for what they add to a
//! cold build of the tests. headless_chrome 1.0.22 brings 15 crates txq does not build
//! (auto_generate_cdp, darling and derive_builder with theirs, ureq, ureq-proto, webpki-roots,
//! which, ...); its build script generates the protocol (1.1 MB, 25 600 lines of Rust), and it
//! builds, alone, in 71 s of CPU (`/usr/bin/time cargo build` of a scratch crate after `cargo
//! clean -p headless_chrome`, debug); the 14 others took 179 s of wall time between them in a
//! scratch build sharing the 2 cores with four others (`cargo build --timings`). chromiumoxide
//! 0.7 brings 9, its generated protocol a crate of its own (chromiumoxide_cdp). Up to 4 minutes
//! more of a 2-core CI run, and an HTTP client with TLS roots built for a build script, against
//! 200 lines that need nothing new.

use crate::util::{command, parse_ndjson, txq};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use txq::generate::{
    Harness, HarnessOptions, ReevalOptions, RupuOptions, write_harness_home, write_reeval_corpus,
    write_rupu_corpus,
};

/// How long any wait on the browser may take.
const PATIENCE: Duration = Duration::from_secs(30);

/// The queries whose tables the page shows, and whether the page shows only their first rows.
const TABLES: &[(&str, Option<usize>)] = &[
    ("corpus_summary", None),
    ("unpriced_models", None),
    ("daily", None),
    ("daily_by_cwd", None),
    ("tool_failures", Some(30)),
    ("tool_spend", Some(30)),
    ("branch_spend", None),
    ("quota_burn", Some(30)),
    ("subagent_spend", Some(25)),
    ("spend_over_time", None),
    ("cache_hit_by_model", None),
    ("agent_spend", None),
    ("reeval_tool_failures", None),
    ("run_outcomes", None),
    ("denied_tools", None),
    ("slowest_tools", None),
    ("network_egress", None),
    ("session", Some(25)),
];

/// A corpus of every format, damage included: rupu (some runs as v0.74 writes them, with netflow
/// ledgers), reeval, and a home of Claude Code, Codex CLI and Gemini CLI.
struct Everything {
    dir: tempfile::TempDir,
    rupu: txq::generate::Expected,
    harnesses: txq::generate::HarnessExpected,
}

fn everything() -> &'static Everything {
    static CORPUS: std::sync::OnceLock<Everything> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let rupu =
            write_rupu_corpus(dir.path(), &RupuOptions { v0_74_percent: 40, ..RupuOptions::default() })
                .unwrap();
        write_reeval_corpus(dir.path(), &ReevalOptions::default()).unwrap();
        let harnesses = write_harness_home(dir.path(), &HarnessOptions::default()).unwrap();
        Everything { dir, rupu, harnesses }
    })
}

/// `txq report ARGS... --out FILE PATH` run in `dir`; the page's text.
fn report(dir: &Path, path: &Path, args: &[&str]) -> String {
    let out = dir.join(format!("report-{}.html", args.join("_").replace(['/', ':', '+'], "-")));
    let mut run = command(dir);
    run.args(["report", "--out"]).arg(&out).args(args).arg(path).stdin(Stdio::null());
    let output = run.output().unwrap();
    assert!(output.status.success(), "txq report {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    std::fs::read_to_string(&out).unwrap()
}

/// The rows of `txq query NAME ARGS... PATH`, each value as the page writes it (null as None);
/// with no ARGS, of `txq -e "set timezone = 'UTC'" -f queries/NAME.sql`,
/// since the page shows every query's times in UTC, a report's or not.
fn query(dir: &Path, path: &Path, name: &str, args: &[&str]) -> Vec<BTreeMap<String, Option<String>>> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("queries/{name}.sql"));
    let file = file.to_str().unwrap();
    let mut all = vec!["--format", "ndjson"];
    match args {
        [] => all.extend(["-e", "set timezone = 'UTC'", "-f", file]),
        args => {
            all.extend(["query", name]);
            all.extend_from_slice(args);
        }
    }
    all.push(path.to_str().unwrap());
    let out = txq(&all, dir);
    assert_eq!(out.code, 0, "txq query {name}: {}", out.stderr);
    parse_ndjson(&out.stdout).iter().map(as_page_writes).collect()
}

fn as_page_writes(row: &Map<String, Value>) -> BTreeMap<String, Option<String>> {
    row.iter()
        .map(|(k, v)| {
            let text = match v {
                Value::Null => None,
                Value::String(s) => Some(s.clone()),
                other => Some(other.to_string()),
            };
            (k.clone(), text)
        })
        .collect()
}

/// The rows of the page's table of `query`, read from the HTML by the same rules the DOM reader
/// of the browser test uses.
fn page_table(html: &str, query: &str) -> Option<Vec<BTreeMap<String, Option<String>>>> {
    table_rows(html, &format!("<table class=\"figures\" data-query=\"{query}\""))
}

/// The rows of the page's table of sums of the rows of `query`, by the same rules.
fn page_sums(html: &str, query: &str) -> Option<Vec<BTreeMap<String, Option<String>>>> {
    table_rows(html, &format!("<table class=\"sums\" data-sums-of=\"{query}\""))
}

/// The rows of the table of the page that begins with `opening`.
fn table_rows(html: &str, opening: &str) -> Option<Vec<BTreeMap<String, Option<String>>>> {
    let start = html.find(opening)?;
    let end = start + html[start..].find("</table>")?;
    let body = &html[start..end];
    let mut rows = Vec::new();
    for row in body.split("<tr").skip(2) {
        let mut cells = BTreeMap::new();
        for cell in row.split("<td").skip(1) {
            let attribute = |name: &str| {
                let at = cell.find(&format!("{name}=\""))? + name.len() + 2;
                Some(unescape(&cell[at..at + cell[at..].find('"')?]))
            };
            let value = if cell.contains("data-null") { None } else { attribute("data-value") };
            cells.insert(attribute("data-column").unwrap(), value);
        }
        rows.push(cells);
    }
    Some(rows)
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

// ---- A small client of the Chrome DevTools protocol ----

/// Chromium, headless, on a profile of its own; killed when dropped, whatever happened.
struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
    port: u16,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The browser's binary: $TXQ_CHROMIUM, else the first of chromium, chromium-browser,
/// google-chrome on the PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("TXQ_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

impl Browser {
    /// Chromium started, or None (after saying why) when there is none and none is required.
    fn start() -> Option<Browser> {
        let Some(binary) = chromium() else {
            assert!(
                std::env::var_os("TXQ_REQUIRE_BROWSER").is_none_or(|v| v != "1"),
                "TXQ_REQUIRE_BROWSER=1 and no chromium on the PATH (apt-get install chromium)"
            );
            eprintln!(
                "skipped: no chromium on the PATH (apt-get install chromium; TXQ_REQUIRE_BROWSER=1 makes this fail)"
            );
            return None;
        };
        let profile = tempfile::tempdir().unwrap();
        let child = std::process::Command::new(&binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{} does not start: {e}", binary.display()));
        let mut browser = Browser { child, _profile: profile, port: 0 };
        let port_file = browser._profile.path().join("DevToolsActivePort");
        let deadline = Instant::now() + PATIENCE;
        while browser.port == 0 {
            if let Some(port) =
                std::fs::read_to_string(&port_file).ok().and_then(|t| t.lines().next()?.parse().ok())
            {
                browser.port = port;
            } else {
                assert!(Instant::now() < deadline, "chromium wrote no DevToolsActivePort");
                assert!(browser.child.try_wait().unwrap().is_none(), "chromium ended at start");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Some(browser)
    }

    /// The websocket address of the page target, from /json/list over a plain HTTP GET.
    fn page_socket(&self) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
            stream.set_read_timeout(Some(PATIENCE)).unwrap();
            let request = format!(
                "GET /json/list HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
                self.port
            );
            stream.write_all(request.as_bytes()).unwrap();
            let body = http_body(&mut stream);
            let targets: Value = serde_json::from_str(&body).unwrap_or(json!([]));
            let page = targets.as_array().into_iter().flatten().find(|t| t["type"] == "page");
            if let Some(url) = page.and_then(|p| p["webSocketDebuggerUrl"].as_str()) {
                return url.to_string();
            }
            assert!(Instant::now() < deadline, "no page target: {body}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The body of the HTTP response on `stream`, as long as its Content-Length says (the browser
/// keeps the connection open).
fn http_body(stream: &mut TcpStream) -> String {
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse::<usize>().ok())?
            });
            if length.is_some_and(|n| body.len() >= n) {
                return body.to_string();
            }
        }
        match stream.read(&mut buffer) {
            Ok(0) => return text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default(),
            Ok(n) => bytes.extend_from_slice(&buffer[..n]),
            Err(e) => panic!("reading /json/list: {e}"),
        }
    }
}

/// A DevTools session over one page: commands answered by id, events kept in order.
struct DevTools {
    socket: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    next_id: u64,
    events: Vec<Value>,
}

impl DevTools {
    fn connect(url: &str) -> DevTools {
        let (socket, _) = tungstenite::connect(url).unwrap_or_else(|e| panic!("{url}: {e}"));
        if let tungstenite::stream::MaybeTlsStream::Plain(stream) = socket.get_ref() {
            stream.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        }
        DevTools { socket, next_id: 1, events: Vec::new() }
    }

    /// The next message, or None after a short wait without one.
    fn read(&mut self) -> Option<Value> {
        match self.socket.read() {
            Ok(tungstenite::Message::Text(text)) => Some(serde_json::from_str(&text).unwrap()),
            Ok(_) => None,
            Err(tungstenite::Error::Io(e))
                if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) =>
            {
                None
            }
            Err(e) => panic!("the DevTools socket failed: {e}"),
        }
    }

    /// Sends `method` and returns its result, keeping the events that came before it.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"id": id, "method": method, "params": params}).to_string();
        self.socket.send(tungstenite::Message::text(message)).unwrap();
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.read() {
                Some(reply) if reply["id"] == id => {
                    assert!(reply.get("error").is_none(), "{method}: {reply}");
                    return reply["result"].clone();
                }
                Some(event) => self.events.push(event),
                None => assert!(Instant::now() < deadline, "{method}: no answer in {PATIENCE:?}"),
            }
        }
    }

    /// Waits for the event `method`.
    fn wait_for(&mut self, method: &str) {
        let deadline = Instant::now() + PATIENCE;
        while !self.events.iter().any(|e| e["method"] == method) {
            match self.read() {
                Some(event) => self.events.push(event),
                None => assert!(Instant::now() < deadline, "no {method} in {PATIENCE:?}"),
            }
        }
    }

    /// The events that came within `time`.
    fn drain(&mut self, time: Duration) {
        let until = Instant::now() + time;
        while Instant::now() < until {
            if let Some(event) = self.read() {
                self.events.push(event);
            }
        }
    }
}

/// What the browser's DOM holds of the page: each chart's points and marks, each figures
/// table's cells, the sections without data, and whether anything could run.
const READ_THE_PAGE: &str = r#"JSON.stringify({
  charts: [...document.querySelectorAll('figure.chart')].map(f => ({
    query: f.dataset.query, column: f.dataset.column, points: Number(f.dataset.points),
    marks: f.querySelectorAll('svg ' + f.dataset.mark).length })),
  tables: Object.fromEntries([...document.querySelectorAll('table.figures')].map(t => [t.dataset.query,
    [...t.tBodies[0].rows].map(r => Object.fromEntries([...r.cells].map(c =>
      [c.dataset.column, c.hasAttribute('data-null') ? null : c.dataset.value])))])),
  empty: [...document.querySelectorAll('.empty')].map(e => e.dataset.query),
  headline: Object.fromEntries([...document.querySelectorAll('#headline [data-figure]')].map(e =>
    [e.dataset.figure, {value: e.dataset.value ?? null, text: e.innerText}])),
  nothing: [...document.querySelectorAll('section.nothing')].map(s => ({
    query: s.querySelector('p.empty')?.dataset.query ?? null, children: s.children.length,
    drawn: s.querySelectorAll('figure, table, svg, h2').length, text: s.innerText })),
  scripts: document.scripts.length, images: document.images.length,
  csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]').content,
  text: document.body.innerText })"#;

/// The page `file` as the browser's DOM holds it ([`READ_THE_PAGE`]), with the DevTools
/// events seen while it loaded, and its URL; None when there is no browser (and none is required).
fn open_in_browser(file: &Path) -> Option<(Value, Vec<Value>, String)> {
    let browser = Browser::start()?;
    let mut tools = DevTools::connect(&browser.page_socket());
    for domain in ["Runtime", "Log", "Network", "Page"] {
        tools.call(&format!("{domain}.enable"), json!({}));
    }
    let url = format!("file://{}", file.display());
    tools.call("Page.navigate", json!({"url": url}));
    tools.wait_for("Page.loadEventFired");
    tools.drain(Duration::from_millis(500));
    let read = tools.call("Runtime.evaluate", json!({"expression": READ_THE_PAGE, "returnByValue": true}));
    let page: Value = serde_json::from_str(read["result"]["value"].as_str().expect("the page read")).unwrap();
    drop(browser);
    Some((page, tools.events, url))
}

/// `txq -e "select count(*), sum(cost_usd), ... from calls" PATH`: the figures the headline sums.
fn calls_totals(dir: &Path, path: &Path) -> Map<String, Value> {
    let sql = "select count(*) as calls, sum(cost_usd) as cost_usd, count(cost_usd) as priced, \
               sum(input_tokens) + sum(output_tokens) as tokens, \
               cast(min(cast(ts as date)) as varchar) as first_day, cast(max(cast(ts as date)) as varchar) as last_day \
               from calls";
    let out = txq(&["--format", "ndjson", "-e", sql, path.to_str().unwrap()], dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    parse_ndjson(&out.stdout).remove(0)
}

/// The headline figure `name` as the browser shows it: its text and its value.
fn headline<'a>(page: &'a Value, name: &str) -> (&'a str, &'a str) {
    let figure = &page["headline"][name];
    (
        figure["text"].as_str().unwrap_or_else(|| panic!("no headline {name}: {}", page["headline"])),
        figure["value"].as_str().unwrap(),
    )
}

/// Dollars as the headline shows them, written here with no help from txq: `$1,234.57`.
fn dollars(usd: f64) -> String {
    let cents = format!("{usd:.2}");
    let (whole, fraction) = cents.split_once('.').unwrap();
    let digits: Vec<char> = whole.chars().collect();
    let groups: Vec<String> = digits.rchunks(3).rev().map(|g| g.iter().collect()).collect();
    format!("${}.{fraction}", groups.join(","))
}

#[test]
fn the_page_in_a_browser_shows_the_figures_of_the_queries_and_the_tally() {
    let corpus = everything();
    let (dir, path) = (corpus.dir.path(), corpus.dir.path());
    let html = report(dir, path, &[]);
    let file = dir.join("report-.html");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), html);
    let Some((page, events, url)) = open_in_browser(&file) else { return };

    // Nothing went wrong, nothing was fetched, nothing can run.
    for event in &events {
        let method = event["method"].as_str().unwrap_or("");
        let params = &event["params"];
        assert!(method != "Runtime.exceptionThrown", "{event}");
        assert!(!(method == "Runtime.consoleAPICalled" && params["type"] == "error"), "{event}");
        assert!(!(method == "Log.entryAdded" && params["entry"]["level"] == "error"), "{event}");
        if method == "Network.requestWillBeSent" {
            assert_eq!(params["request"]["url"], url.as_str(), "only the document is requested: {event}");
        }
    }
    assert!(
        events.iter().any(|e| e["method"] == "Network.requestWillBeSent"),
        "the document's request is seen"
    );
    assert_eq!(page["scripts"], 0);
    assert_eq!(page["images"], 0);
    assert_eq!(page["csp"], "default-src 'none'; style-src 'unsafe-inline'; img-src data:");

    // Every chart draws its points: a mark each.
    let charts = page["charts"].as_array().unwrap();
    assert!(charts.len() >= 12, "{charts:?}");
    for chart in charts {
        assert!(chart["points"].as_u64().unwrap() > 0, "{chart}");
        assert_eq!(chart["points"], chart["marks"], "{chart}");
    }
    let spend_rows = query(dir, path, "spend_over_time", &[]);
    for column in ["uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"] {
        let chart = charts.iter().find(|c| c["query"] == "spend_over_time" && c["column"] == column).unwrap();
        assert_eq!(chart["points"].as_u64().unwrap() as usize, spend_rows.len(), "{column}");
    }
    assert!(page["empty"].as_array().unwrap().iter().all(|q| q == "failing_commands"), "{}", page["empty"]);

    // The headline is the sums of `calls`, as txq sums them and as the generator counted them.
    let totals = calls_totals(dir, path);
    assert_eq!(totals["priced"], totals["calls"], "every call of the corpus has a price");
    let cost = totals["cost_usd"].as_f64().unwrap();
    let (text, value) = headline(&page, "cost_usd");
    assert_eq!(text, dollars(cost));
    assert!((value.parse::<f64>().unwrap() - cost).abs() < 1e-5, "{value} {cost}");
    let generated_calls = corpus.harnesses.by_model.values().map(|s| s.calls).sum::<u64>()
        + corpus.rupu.events_by_type.get("usage").copied().unwrap_or(0);
    assert_eq!(totals["calls"], json!(generated_calls));
    assert_eq!(headline(&page, "calls").1, generated_calls.to_string());
    assert_eq!(headline(&page, "tokens").1, totals["tokens"].to_string());
    assert_eq!(headline(&page, "first_day").1, totals["first_day"].as_str().unwrap());
    assert_eq!(headline(&page, "last_day").1, totals["last_day"].as_str().unwrap());
    let sessions = query(dir, path, "session", &[]).len();
    assert_eq!(headline(&page, "sessions").1, sessions.to_string());

    // Each table of figures is what `txq query` answers.
    let tables = page["tables"].as_object().unwrap();
    for (name, limit) in TABLES {
        let want = query(dir, path, name, &[]);
        let want = &want[..limit.unwrap_or(want.len()).min(want.len())];
        let got: Vec<BTreeMap<String, Option<String>>> =
            serde_json::from_value(tables.get(*name).cloned().unwrap_or(json!([]))).unwrap();
        assert_eq!(got, want, "{name}");
        assert_eq!(page_table(&html, name).unwrap_or_default(), want, "{name} in the HTML");
    }

    // And the generator's tally: calls and tokens per harness and model, tokens per model.
    let cache = query(dir, path, "cache_hit_by_model", &[]);
    for ((harness, model), sums) in &corpus.harnesses.by_model {
        let row = cache
            .iter()
            .find(|r| r["harness"].as_deref() == Some(harness) && r["model"].as_deref() == Some(model))
            .unwrap_or_else(|| panic!("{harness} {model}"));
        let figure = |c: &str| row[c].as_deref().unwrap().parse::<i64>().unwrap();
        assert_eq!(figure("calls"), sums.calls as i64, "{harness} {model}");
        assert_eq!(figure("input_tokens"), sums.input_tokens, "{harness} {model}");
        assert_eq!(figure("cache_read_tokens"), sums.cache_read_tokens, "{harness} {model}");
        assert_eq!(figure("cache_write_tokens"), sums.cache_write_tokens, "{harness} {model}");
    }
    let mut output_by_model: BTreeMap<String, i64> = BTreeMap::new();
    for ((_, model), sums) in &corpus.harnesses.by_model {
        *output_by_model.entry(model.clone()).or_default() += sums.output_tokens;
    }
    for (model, (_, output, _)) in &corpus.rupu.tokens_by_model {
        *output_by_model.entry(model.clone()).or_default() += output;
    }
    let mut charted: BTreeMap<String, i64> = BTreeMap::new();
    for row in tables["spend_over_time"].as_array().unwrap() {
        let output: i64 = row["output_tokens"].as_str().unwrap().parse().unwrap();
        *charted.entry(row["model"].as_str().unwrap().to_string()).or_default() += output;
    }
    assert_eq!(charted, output_by_model);
    let calls: i64 = corpus.harnesses.by_model.values().map(|s| s.calls as i64).sum::<i64>()
        + corpus.rupu.events_by_type.get("usage").copied().unwrap_or(0) as i64;
    let charted_calls: i64 = tables["spend_over_time"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["calls"].as_str().unwrap().parse::<i64>().unwrap())
        .sum();
    assert_eq!(charted_calls, calls);
    let text = page["text"].as_str().unwrap();
    assert!(text.contains(&format!(
        "{} transcripts",
        tables["corpus_summary"].as_array().unwrap().last().unwrap()["transcripts"].as_str().unwrap()
    )));
    assert!(text.contains("txq query spend_over_time"), "the page names its queries");
}

#[test]
fn since_and_until_narrow_the_spend_charts() {
    let corpus = everything();
    let (dir, path) = (corpus.dir.path(), corpus.dir.path());
    let days = ["--since", "2026-09-03", "--until", "2026-09-04", "--timezone", "Europe/Paris"];
    let html = report(dir, path, &days);
    let all = query(dir, path, "spend_over_time", &[]);
    let narrowed = query(dir, path, "spend_over_time", &days);
    let calls = |rows: &[BTreeMap<String, Option<String>>]| -> i64 {
        rows.iter().map(|r| r["calls"].as_deref().unwrap().parse::<i64>().unwrap()).sum()
    };
    assert!(!narrowed.is_empty() && calls(&narrowed) < calls(&all), "{narrowed:?}");
    // Two days are less than 3: per hour.
    assert!(narrowed.iter().all(|r| r["unit"].as_deref() == Some("hour")));
    assert!(all.iter().all(|r| r["unit"].as_deref() == Some("day")));
    for row in &narrowed {
        let start = row["period_start"].as_deref().unwrap();
        assert!(("2026-09-03".."2026-09-05").contains(&start) && start.ends_with("+02:00"), "{start}");
    }
    assert_eq!(page_table(&html, "spend_over_time").unwrap(), narrowed);
    assert_eq!(page_table(&html, "session").unwrap(), &query(dir, path, "session", &days)[..]);
    // A query that is no spend report is not narrowed, and the page says so.
    assert_eq!(page_table(&html, "denied_tools").unwrap(), query(dir, path, "denied_tools", &[]));
    assert!(html.contains("<code>denied_tools</code> is no spend report"));
    assert!(html.contains("2026-09-03 to 2026-09-04, in Europe/Paris"));
    // The headline counts the calls of those days in Paris (UTC+2 in September), and their cost.
    let out =
        txq(&["--format", "ndjson", "-e", "select ts, cost_usd from calls", path.to_str().unwrap()], dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (mut calls, mut cost) = (0, 0.0);
    for row in parse_ndjson(&out.stdout) {
        let Some(ts) = row["ts"].as_str() else { continue };
        let day =
            (chrono::DateTime::parse_from_rfc3339(ts).unwrap() + chrono::Duration::hours(2)).date_naive();
        if ("2026-09-03".."2026-09-05").contains(&day.format("%Y-%m-%d").to_string().as_str()) {
            calls += 1;
            cost += row["cost_usd"].as_f64().unwrap();
        }
    }
    assert!(calls > 0);
    assert_eq!(headline_in_html(&html, "calls"), calls.to_string());
    // The projects are of those days too: their calls are the headline's.
    assert_eq!(page_table(&html, "daily_by_cwd").unwrap(), query(dir, path, "daily_by_cwd", &days));
    let projects = page_sums(&html, "daily_by_cwd").unwrap();
    let project_calls: i64 =
        projects.iter().map(|r| r["calls"].as_deref().unwrap().parse::<i64>().unwrap()).sum();
    assert_eq!(project_calls, calls);
    assert!((headline_in_html(&html, "cost_usd").parse::<f64>().unwrap() - cost).abs() < 1e-5, "{cost}");
}

/// The value of the headline figure `name` in the page's HTML.
fn headline_in_html(html: &str, name: &str) -> String {
    let at = html.find(&format!("data-figure=\"{name}\" data-value=\"")).unwrap() + name.len() + 27;
    unescape(&html[at..at + html[at..].find('"').unwrap()])
}

/// A Claude Code assistant line whose model and text are hostile.
fn hostile_line(model: &str) -> String {
    json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/home/x",
        "sessionId": "0badc0de-0000-4000-8000-000000000001", "version": "2.1.210", "gitBranch": "main",
        "type": "assistant", "requestId": "req_hostile",
        "message": {"content": [{"type": "text", "text": "</script>"}], "id": "msg_hostile", "model": model,
                    "role": "assistant", "stop_reason": "end_turn", "stop_sequence": null, "type": "message",
                    "usage": {"cache_creation_input_tokens": 5, "cache_read_input_tokens": 7,
                              "input_tokens": 11, "output_tokens": 13}},
        "uuid": "00000000-0000-4000-8000-00000000beef", "timestamp": "2026-09-02T12:00:00.000Z"
    })
    .to_string()
}

#[test]
fn a_claude_only_home_says_which_sections_have_no_data_and_hostile_names_stay_text() {
    let home = tempfile::tempdir().unwrap();
    let options =
        HarnessOptions { harnesses: vec![Harness::Claude], sessions: 6, ..HarnessOptions::default() };
    write_harness_home(home.path(), &options).unwrap();
    let hostile = "<img src=x onerror=alert(1)></script><script>alert(2)</script>";
    let folder = home.path().join(".claude/projects/-home-x");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("0badc0de-0000-4000-8000-000000000001.jsonl"), hostile_line(hostile) + "\n")
        .unwrap();
    // A right-to-left override in a model name reversed the page's text after it.
    let reversing = "gpt-\u{202e}lave\u{2066}";
    let line = hostile_line(reversing)
        .replace("msg_hostile", "msg_reversing")
        .replace("-000000000001", "-000000000002");
    std::fs::write(folder.join("0badc0de-0000-4000-8000-000000000002.jsonl"), line + "\n").unwrap();
    let html = report(home.path(), home.path(), &[]);
    assert!(!html.contains('\u{202e}') && !html.contains('\u{2066}'), "no bidi control is written raw");
    assert!(html.contains("gpt-\\u{202e}lave\\u{2066}"), "it is written visibly, as on a terminal");
    for section in [
        "quota_burn",
        "agent_spend",
        "reeval_tool_failures",
        "run_outcomes",
        "denied_tools",
        "failing_commands",
        "slowest_tools",
        "network_egress",
    ] {
        assert!(html.contains(&format!("<p class=\"empty\" data-query=\"{section}\"><strong>")), "{section}");
    }
    assert_eq!(html.matches("<section class=\"nothing\"").count(), 8);
    assert!(
        !html.contains("<img") && !html.contains("<script") && !html.contains("</script"),
        "nothing from the data is markup"
    );
    let escaped = "&lt;img src=x onerror=alert(1)&gt;&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;";
    assert!(html.contains(escaped), "the name is shown as text");
    let unpriced = page_table(&html, "unpriced_models").unwrap();
    assert_eq!(unpriced.len(), 2);
    assert!(unpriced.iter().any(|row| row["model"].as_deref() == Some(hostile)), "{unpriced:?}");
    assert!(html.matches("<figure class=\"chart\"").count() >= 7, "the spend and cache charts are there");
}

/// The last two components of a working directory, as a project is named (`src/my_app`).
fn project_of(cwd: &str) -> String {
    let parts: Vec<&str> = cwd.split('/').filter(|p| !p.is_empty()).collect();
    parts[parts.len().saturating_sub(2)..].join("/")
}

/// `x` rounded to `places` decimals, as SQL's `round` does.
fn rounded(x: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (x * scale).round() / scale
}

#[test]
fn a_home_of_harnesses_alone_has_its_headline_projects_and_tool_failures_and_a_line_for_the_rest() {
    let home = tempfile::tempdir().unwrap();
    let options = HarnessOptions { seed: 7, sessions: 8, ..HarnessOptions::default() };
    let expected = write_harness_home(home.path(), &options).unwrap();
    let html = report(home.path(), home.path(), &[]);

    // Each session's spend as txq prices its calls (the price list is txq's, tested on its own:
    // tests/queries.rs); the sums and groupings below are the test's.
    let sql = "select harness, session_id, parent_session_id, sum(cost_usd) as cost_usd, \
               count(cost_usd) as priced, count(*) as calls \
               from calls group by harness, session_id, parent_session_id";
    let out = txq(&["--format", "ndjson", "-e", sql, home.path().to_str().unwrap()], home.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut spent: BTreeMap<(String, String, Option<String>), f64> = BTreeMap::new();
    for row in parse_ndjson(&out.stdout) {
        assert_eq!(row["priced"], row["calls"], "every call has a price: {row:?}");
        let key = |c: &str| row[c].as_str().map(str::to_string);
        spent.insert(
            (key("harness").unwrap(), key("session_id").unwrap(), key("parent_session_id")),
            row["cost_usd"].as_f64().unwrap(),
        );
    }
    let cost: f64 = spent.values().sum();
    assert!((cost - calls_totals(home.path(), home.path())["cost_usd"].as_f64().unwrap()).abs() < 1e-9);

    // Tool failures: per harness and tool, the generator's tool calls and those that failed.
    let mut tools: BTreeMap<(String, String), (i64, i64)> = BTreeMap::new();
    for call in &expected.tool_calls {
        let counts = tools.entry((call.harness.clone(), call.tool.clone())).or_default();
        counts.0 += 1;
        counts.1 += i64::from(!call.ok);
    }
    let mut want: Vec<(String, String, i64, i64, f64)> = tools
        .into_iter()
        .map(|((harness, tool), (calls, failures))| {
            (harness, tool, calls, failures, rounded(failures as f64 / calls as f64, 4))
        })
        .collect();
    want.sort_by(|a, b| {
        b.3.cmp(&a.3).then(b.4.total_cmp(&a.4)).then_with(|| (&a.0, &a.1).cmp(&(&b.0, &b.1)))
    });
    let got = page_table(&html, "tool_failures").unwrap();
    assert_eq!(got.len(), want.len().min(30));
    assert!(want.iter().any(|w| w.3 > 0), "the generator writes failed tool calls");
    for (row, (harness, tool, calls, failures, rate)) in got.iter().zip(&want) {
        let figure = |c: &str| row[c].clone().unwrap();
        assert_eq!((figure("harness"), figure("tool")), (harness.clone(), tool.clone()));
        assert_eq!(figure("calls"), calls.to_string(), "{harness} {tool}");
        assert_eq!(figure("failures"), failures.to_string(), "{harness} {tool}");
        assert_eq!(figure("failure_rate").parse::<f64>().unwrap(), *rate, "{harness} {tool}");
    }

    // Projects: the calls of the generator's sessions, by the last two components of their cwd.
    let mut by_project: BTreeMap<String, (u64, i64, i64, f64)> = BTreeMap::new();
    for session in expected.sessions.iter().filter(|s| s.calls > 0) {
        let project = by_project.entry(project_of(session.cwd.as_deref().unwrap())).or_default();
        project.0 += session.calls;
        project.1 += session.input_tokens;
        project.2 += session.output_tokens;
        let key = (session.harness.clone(), session.session_id.clone(), session.parent_session_id.clone());
        project.3 += spent[&key];
    }
    let got = page_sums(&html, "daily_by_cwd").unwrap();
    assert_eq!(got.len(), by_project.len());
    assert!(by_project.len() > 1 && by_project.keys().all(|p| p.contains('/')), "{by_project:?}");
    for row in &got {
        let figure = |c: &str| row[c].clone().unwrap();
        let (calls, input, output, usd) = &by_project[&figure("name")];
        assert_eq!(figure("calls"), calls.to_string());
        assert_eq!(figure("input_tokens"), input.to_string());
        assert_eq!(figure("output_tokens"), output.to_string());
        assert!((figure("cost_usd").parse::<f64>().unwrap() - usd).abs() < 1e-5, "{row:?} {usd}");
    }
    let costs: Vec<f64> = got.iter().map(|r| r["cost_usd"].as_deref().unwrap().parse().unwrap()).collect();
    assert!(costs.windows(2).all(|w| w[0] >= w[1]), "most expensive first: {costs:?}");

    // Harnesses and models: the generator's sums of each.
    let got = page_sums(&html, "daily").unwrap();
    assert_eq!(got.len(), expected.by_model.len());
    for ((harness, model), sums) in &expected.by_model {
        let row = got
            .iter()
            .find(|r| r["name"].as_deref() == Some(&format!("{model} · {harness}")))
            .unwrap_or_else(|| panic!("{model} · {harness}: {got:?}"));
        assert_eq!(row["calls"].as_deref(), Some(sums.calls.to_string().as_str()));
        assert_eq!(row["input_tokens"].as_deref(), Some(sums.input_tokens.to_string().as_str()));
        assert_eq!(row["output_tokens"].as_deref(), Some(sums.output_tokens.to_string().as_str()));
    }

    // The sections of formats this home has none of are a line each, nothing drawn.
    let owned: Vec<&str> = txq::format::all().iter().flat_map(|f| f.queries).map(|q| q.name).collect();
    let file = home.path().join("report-.html");
    let Some((page, _, _)) = open_in_browser(&file) else { return };
    let nothing = page["nothing"].as_array().unwrap();
    let mut empty: Vec<&str> = nothing.iter().map(|n| n["query"].as_str().unwrap()).collect();
    empty.sort();
    let mut on_the_page: Vec<&str> = txq::report::queries(&txq::report::format_sections())
        .into_iter()
        .filter(|q| owned.contains(q))
        .collect();
    on_the_page.sort();
    assert_eq!(empty, on_the_page, "every section of a format's own says it has nothing, and only those");
    for section in nothing {
        assert_eq!(section["children"], 1, "{section}");
        assert_eq!(section["drawn"], 0, "{section}");
        let text = section["text"].as_str().unwrap();
        assert!(
            !text.trim().contains('\n') && text.contains(": No ") && text.contains(" in these transcripts."),
            "{text}"
        );
    }
    assert!(
        nothing.iter().any(|n| n["text"].as_str().unwrap().contains("No rupu runs in these transcripts.")),
        "{nothing:?}"
    );

    // The headline: the generator's calls and tokens, the sessions, the spend priced by hand.
    let (text, value) = headline(&page, "cost_usd");
    assert_eq!(text, dollars(cost));
    assert!((value.parse::<f64>().unwrap() - cost).abs() < 1e-5, "{value} {cost}");
    assert_eq!(headline(&page, "calls").1, expected.calls.len().to_string());
    let tokens: i64 = expected.calls.iter().map(|c| c.input_tokens + c.output_tokens).sum();
    assert_eq!(headline(&page, "tokens").1, tokens.to_string());
    assert_eq!(headline(&page, "sessions").1, expected.sessions.len().to_string());
    let days: BTreeSet<&str> = expected.calls.iter().map(|c| &c.ts[..10]).collect();
    assert_eq!(headline(&page, "first_day").1, *days.first().unwrap());
    assert_eq!(headline(&page, "last_day").1, *days.last().unwrap());
    // Every day from the first to the last has its place in the columns of spend by day.
    let by_day = page["charts"].as_array().unwrap().iter().find(|c| c["query"] == "daily").unwrap().clone();
    assert_eq!(by_day["points"], by_day["marks"]);
}

#[test]
fn out_into_a_missing_folder_is_refused_and_dash_is_stdout() {
    let corpus = everything();
    let dir = corpus.dir.path();
    let missing = dir.join("no/such/folder/report.html");
    let out = txq(&["report", "--out", missing.to_str().unwrap(), dir.to_str().unwrap()], dir);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("no folder") && out.stderr.contains("no/such/folder"), "{}", out.stderr);
    let out = txq(&["-q", "report", "--out", "-", dir.to_str().unwrap()], dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("<!DOCTYPE html>") && out.stdout.trim_end().ends_with("</html>"));
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}
