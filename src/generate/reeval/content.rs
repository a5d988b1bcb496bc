//! What reeval events say: the evals' prompts, prose, tool inputs and outputs, paths, web
//! queries, harness messages, the harnesses' tool-call ids, and the over-128 KB tool output cut
//! with reeval's marker.

use serde_json::{Value, json};

use super::Harness;
use super::lines::Truncation;
use crate::generate::rng::Rng;

/// An eval: its slug, the prompt of each turn it sends, and whether a judge grades it.
pub(super) struct Eval {
    pub(super) slug: &'static str,
    pub(super) prompts: &'static [&'static str],
    pub(super) judged: bool,
}

/// Run `k` takes 2–3 consecutive evals starting at `EVALS[k % 5]`; the first has three turns.
pub(super) const EVALS: [Eval; 5] = [
    Eval {
        slug: "fix-parser",
        prompts: &[
            "The CSV parser in src/parse.js drops the last field when a line ends with a comma: `a,b,` gives [\"a\",\"b\"]. Fix it and add a test.",
            "Also keep quoted fields whole:\n\n    \"x,y\",z  →  [\"x,y\", \"z\"]\n\nDon't change the public API.",
            "Run the whole suite and summarise the change in two sentences.",
        ],
        judged: true,
    },
    Eval {
        slug: "add-retry-flag",
        prompts: &[
            "Add a --retries <n> flag to bin/fetch.js (default 3, max 9); a non-number exits 2 with \"invalid --retries\".",
            "Document it in README.md, with the Japanese example too: 再試行回数を 5 に設定する → --retries 5",
        ],
        judged: false,
    },
    Eval {
        slug: "greet",
        prompts: &[
            "Create greet.js exporting greet(name) that returns \"Hello, <name>!\", and greet.test.js that tests it with node:test. No dependencies.",
        ],
        judged: true,
    },
    Eval {
        slug: "i18n-dates",
        prompts: &[
            "Format the report's dates for fr-FR as « 26 septembre 2026 » with Intl.DateTimeFormat; keep en-US as is.",
            "Now de-DE too: „26. September 2026“.",
        ],
        judged: false,
    },
    Eval {
        slug: "pin-undici",
        prompts: &[
            "Which undici release fixed the proxy-auth leak? Look it up, pin that version in package.json and cite the advisory.",
        ],
        judged: true,
    },
];

/// Characters of a cut output kept before the marker, and after it.
const KEPT_HEAD_CHARS: usize = 96 * 1024;
const KEPT_TAIL_CHARS: usize = 16 * 1024;

const REASONING: &[&str] = &[
    "The trailing comma case: split(',') on \"a,b,\" gives three items, but the loop stops one short.",
    "I'll read the parser first, then write the failing test before touching the code.",
    "Quoted fields need a small state machine; a regex won't handle \"x,\"\"y\"\"\" correctly.",
    "Le test échoue à cause de l'accent dans « réglages » — encoding, not logic.",
    "Two options:\n1. patch the loop\n2. rewrite with a reader\nOption 1 keeps the diff small.",
];
const INTERIM_TEXT: &[&str] = &[
    "I'll start by reading the parser and its tests.",
    "Let me check how the flag is parsed today.",
    "まずテストを実行して、失敗箇所を確認します。",
];
const FINAL_TEXT: &[&str] = &[
    "Fixed: a trailing comma now yields an empty last field, so `a,b,` parses to [\"a\", \"b\", \"\"]. Added two tests.",
    "Done. `--retries` defaults to 3, caps at 9, and `--retries x` exits 2 with \"invalid --retries\".\n\nREADME updated.",
    "Les dates du rapport s'affichent maintenant « 26 septembre 2026 » en fr-FR ; en-US est inchangé. ✅",
    "All 14 tests pass ✔ — the change is limited to src/parse.js and its test file.",
    "Pinned undici to 7.16.1, the release that fixed the proxy-auth leak; the advisory is cited in package.json's \"//\" comment.",
    "README の例を追加しました：`--retries 5` で再試行回数を 5 に設定します。",
    "Deleted the unused src/parse.old.js; nothing imported it (checked with grep).",
];
/// Workspace-relative paths; antigravity reports them absolute, under [`ANTIGRAVITY_WORKSPACE`].
const PATHS: &[&str] = &[
    "src/parse.js",
    "test/parse.test.js",
    "bin/fetch.js",
    "README.md",
    "docs/réglages.md",
    "src/i18n/dates.js",
    "package.json",
    "src/parse.old.js",
];
const ANTIGRAVITY_WORKSPACE: &str = "/tmp/reeval-ws-4f2a/work/";
const COMMANDS: &[&str] =
    &["node --test", "npm test -- --reporter=spec", "git diff --stat", "node bin/fetch.js --retries x"];
const GLOBS: &[&str] = &["src/**/*.js", "test/**/*.test.js", "**/*.md"];
const DOC_QUERIES: &[&str] =
    &["node:test mock.timers", "Intl.DateTimeFormat fr-FR month long", "undici ProxyAgent auth"];
const SEARCH_QUERIES: &[&str] = &[
    "RFC 4180 quoted field with embedded comma",
    "undici proxy-authorization leak GHSA advisory fixed version",
    "Intl.DateTimeFormat \"de-DE\" „26. September“",
    "node:test describe vs suite",
];
const FETCH_URLS: &[&str] = &[
    "https://www.rfc-editor.org/rfc/rfc4180",
    "https://github.com/nodejs/undici/security/advisories?page=2",
    "https://nodejs.org/api/test.html#describe-and-it-aliases",
    "https://developer.mozilla.org/fr/docs/Web/JavaScript/Reference/Global_Objects/Intl/DateTimeFormat",
];

pub(super) fn reasoning(rng: &mut Rng) -> &'static str {
    rng.pick(REASONING)
}

pub(super) fn interim_text(rng: &mut Rng) -> &'static str {
    rng.pick(INTERIM_TEXT)
}

pub(super) fn final_text(rng: &mut Rng) -> &'static str {
    rng.pick(FINAL_TEXT)
}

pub(super) fn search_query(rng: &mut Rng) -> &'static str {
    rng.pick(SEARCH_QUERIES)
}

pub(super) fn fetch_url(rng: &mut Rng) -> &'static str {
    rng.pick(FETCH_URLS)
}

/// A path as `harness` reports file edits: relative to the workspace, absolute for antigravity.
pub(super) fn edit_path(rng: &mut Rng, harness: Harness) -> String {
    let path = rng.pick(PATHS);
    match harness {
        Harness::Antigravity => format!("{ANTIGRAVITY_WORKSPACE}{path}"),
        Harness::Cursor | Harness::ClaudeCode => path.to_string(),
    }
}

/// The tools a harness names in its `tool` events.
pub(super) fn tools(harness: Harness) -> &'static [&'static str] {
    match harness {
        Harness::Cursor => &["read", "glob", "grep", "bash", "mcp__docs__search"],
        Harness::ClaudeCode => &["read", "glob", "grep", "bash", "todo_write"],
        Harness::Antigravity => &["read", "list_dir", "bash", "mcp__docs__search"],
    }
}

/// A tool-call id in the harness's own style.
pub(super) fn tool_call_id(rng: &mut Rng, harness: Harness) -> String {
    match harness {
        Harness::Cursor => {
            format!("tool_{}-{}-{}-{}-{}", rng.hex(8), rng.hex(4), rng.hex(4), rng.hex(4), rng.hex(12))
        }
        Harness::ClaudeCode => format!("toolu_01{}", rng.hex(22)),
        Harness::Antigravity => format!("call_{}", rng.hex(16)),
    }
}

pub(super) fn tool_input(rng: &mut Rng, tool: &str) -> Value {
    match tool {
        "read" => json!({"path": rng.pick(PATHS)}),
        "glob" => json!({"pattern": rng.pick(GLOBS)}),
        "grep" => json!({"pattern": "split\\(','\\)", "path": "src", "lineNumbers": true}),
        "bash" => json!({"command": rng.pick(COMMANDS), "timeoutMs": 120_000}),
        "list_dir" => json!({"path": "src", "depth": 2}),
        "todo_write" => json!({"todos": [
            {"content": "Fix the trailing-comma case", "status": "completed"},
            {"content": "Handle \"quoted, fields\"", "status": "in_progress"},
        ]}),
        _ => json!({"query": rng.pick(DOC_QUERIES), "limit": 5}),
    }
}

/// What a tool printed: a result when `ok`, else the harness's error text.
pub(super) fn tool_output(rng: &mut Rng, tool: &str, ok: bool) -> String {
    let text = match (tool, ok) {
        ("read", true) => "export function parse(line) {\n  return line.split(',');\n}\n",
        ("read", false) => "ENOENT: no such file or directory, open 'src/gone.js'",
        ("glob" | "list_dir", true) => "src/parse.js\nsrc/i18n/dates.js\ntest/parse.test.js",
        ("grep", true) => "src/parse.js:2:  return line.split(',');",
        ("bash", true) => rng.pick(&[
            "✔ parse keeps a trailing empty field (0.41ms)\n✔ parse keeps \"x,y\" whole (0.09ms)\nℹ tests 14\nℹ pass 14\nℹ fail 0",
            " src/parse.js        | 9 +++++----\n test/parse.test.js  | 12 ++++++++++++\n 2 files changed, 17 insertions(+), 4 deletions(-)",
        ]),
        ("bash", false) => {
            "exit code 2\ninvalid --retries: \"x\" is not a number\n    at parseArgs (bin/fetch.js:14:11)"
        }
        ("todo_write", true) => "Todos updated: 1 completed, 1 in progress",
        ("mcp__docs__search", true) => {
            "1. Intl.DateTimeFormat — month: \"long\" gives « septembre » in fr-FR\n2. node:test — mock.timers.enable({ apis: ['setTimeout'] })"
        }
        ("mcp__docs__search", false) => "MCP error -32000: Connection closed (server \"docs\")",
        _ => "tool failed: timed out after 120000 ms",
    };
    text.to_string()
}

/// A test log of over 128 KB as reeval writes it, its first 96 KB, the marker and its last
/// 16 KB, all ASCII so characters are bytes; with what the marker says.
pub(super) fn truncated_log(rng: &mut Rng) -> (String, Truncation) {
    let left_out = rng.size(20_000, 400_000);
    let total = left_out + KEPT_HEAD_CHARS + KEPT_TAIL_CHARS;
    let sha256 = rng.hex(64);
    let head = test_log(rng, KEPT_HEAD_CHARS, 1);
    let tail = format!("\n{}", test_log(rng, KEPT_TAIL_CHARS - 1, 90_001));
    let marker = format!("[reeval: truncated {left_out} of {total} characters, sha256 {sha256}]");
    let truncation = Truncation { total: total as i64, sha256 };
    (format!("{head}{marker}{tail}"), truncation)
}

/// Exactly `chars` ASCII characters of TAP-style test lines numbered from `first`, ending in a
/// newline.
fn test_log(rng: &mut Rng, chars: usize, first: u64) -> String {
    let mut log = String::with_capacity(chars + 80);
    let mut case = first;
    while log.len() < chars {
        let fields = rng.range(1, 9);
        let micros = rng.range(10, 9_999);
        log.push_str(&format!(
            "ok {case} - parse(\"row {case}\") returns {fields} fields # time=0.{micros:04}ms\n"
        ));
        case += 1;
    }
    log.truncate(chars - 1);
    log.push('\n');
    log
}

/// The `retry` message of the `attempt`-th retried model call (antigravity retries up to 9).
pub(super) fn retry_message(rng: &mut Rng, attempt: usize) -> String {
    let cause =
        rng.pick(&["Gemini dropped the stream mid-reply", "Gemini refused the call: 429 RESOURCE_EXHAUSTED"]);
    format!("{cause}; retrying ({attempt}/9)")
}

/// The `error` message that ends a turn, after `retries` retried calls.
pub(super) fn error_message(harness: Harness, retries: usize) -> String {
    match harness {
        Harness::ClaudeCode => "Credit balance is too low".to_string(),
        Harness::Cursor => {
            "Agent stream closed: [unavailable] connect ECONNRESET 104.18.2.161:443".to_string()
        }
        Harness::Antigravity => format!(
            "Gemini call failed after {retries} retries: 503 UNAVAILABLE — \"The model is overloaded.\""
        ),
    }
}
