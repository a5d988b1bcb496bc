//! The shape of the source tree: each folder of `src/` is a stage of the pipeline that imports
//! only from the stages below it, no two modules import each other (directly or round a loop),
//! and nothing outside `src/format/` names a format. Read from the source text, test code left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The stages, lowest first: a module may use its own stage and those before it.
const STAGES: [&str; 15] = [
    "text", "error", "generate", "format", "source", "json", "infer", "table", "scan", "sql", "cluster",
    "export", "archive", "report", "cli",
];

/// Every module of the library (`infer::cache` for `src/infer/cache/mod.rs`), with the code of its
/// file outside `#[cfg(test)]` modules, comment lines left out.
fn modules() -> BTreeMap<String, String> {
    modules_with_comments()
        .into_iter()
        .map(|(module, (_, code))| (module, without_comment_lines(&code)))
        .collect()
}

/// Every module of the library, with its file (`src/infer/cache/mod.rs`) and the file's text
/// outside `#[cfg(test)]` items, its comments kept.
fn modules_with_comments() -> BTreeMap<String, (String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    for entry in walk(&src) {
        let relative = entry.strip_prefix(&src).unwrap().with_extension("");
        let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        if parts == ["lib"] || parts == ["main"] || parts.last().is_some_and(|p| p == "tests") {
            continue;
        }
        let text = std::fs::read_to_string(&entry).unwrap();
        let file = Path::new("src").join(entry.strip_prefix(&src).unwrap()).display().to_string();
        out.insert(parts.join("::"), (file, without_test_items(&text)));
    }
    out
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The text with each `#[cfg(test)]` item (a `mod tests { ... }` to its closing brace) and
/// every comment line taken out.
fn without_tests(text: &str) -> String {
    without_comment_lines(&without_test_items(text))
}

/// The text with every line that is empty or only a comment taken out.
fn without_comment_lines(text: &str) -> String {
    let code = |line: &&str| !line.trim().is_empty() && !line.trim_start().starts_with("//");
    text.lines().filter(code).flat_map(|line| [line, "\n"]).collect()
}

/// The text with each `#[cfg(test)]` item (a `mod tests { ... }` to its closing brace) made
/// empty lines, so that the others keep their numbers.
fn without_test_items(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            // The item that follows: one line ending in `;`, or a block to its brace at that indent.
            out.push('\n');
            let Some(item) = lines.next() else { break };
            out.push('\n');
            if item.trim_end().ends_with('{') {
                let indent = item.len() - item.trim_start().len();
                for inner in lines.by_ref() {
                    out.push('\n');
                    if inner.len() - inner.trim_start().len() == indent && inner.trim() == "}" {
                        break;
                    }
                }
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The modules `module`'s code names: `crate::a::b::...` and `super::...` paths (in `use` lines
/// and in code), each taken to the longest prefix that is a module.
fn uses(module: &str, text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let parent: Vec<&str> = {
        let mut p: Vec<&str> = module.split("::").collect();
        p.pop();
        p
    };
    let expand = |path: &str| -> Vec<String> {
        // `a::{b, c::d}` names a::b and a::c::d; `a::b::{self, X}` names a::b.
        let path = path.trim_end_matches("::");
        if let Some(open) = path.find('{') {
            let head = &path[..open];
            let inner = path[open + 1..].trim_end_matches('}');
            inner.split(',').map(|part| format!("{head}{}", part.trim())).collect()
        } else {
            vec![path.to_string()]
        }
    };
    let mut consider = |path: String| {
        let parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
        for n in (1..=parts.len()).rev() {
            let candidate = parts[..n].join("::");
            if known.contains(&candidate) {
                out.insert(candidate);
                return;
            }
        }
    };
    for (prefix, base) in [("crate::", Vec::new()), ("super::", parent.clone())] {
        let mut rest = text;
        while let Some(at) = rest.find(prefix) {
            let before = rest[..at].chars().last();
            rest = &rest[at + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut end =
                rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(rest.len());
            if rest[end..].starts_with('{') {
                end += rest[end..].find('}').map(|e| e + 1).unwrap_or(rest.len() - end);
            }
            for path in expand(&rest[..end]) {
                let mut full: Vec<String> = base.iter().map(|s| s.to_string()).collect();
                full.push(path);
                consider(full.join("::"));
            }
        }
    }
    out.remove(module);
    out
}

fn stage(module: &str) -> usize {
    let top = module.split("::").next().unwrap();
    STAGES.iter().position(|s| *s == top).unwrap_or_else(|| panic!("src/{top} is in no stage of STAGES"))
}

/// Whether one module contains the other (a folder's `mod.rs` and its files share their types).
fn nested(a: &str, b: &str) -> bool {
    a.starts_with(&format!("{b}::")) || b.starts_with(&format!("{a}::"))
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules();
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    modules.iter().map(|(m, text)| (m.clone(), uses(m, text, &known))).collect()
}

#[test]
fn each_stage_imports_only_from_the_stages_below_it() {
    let mut wrong = Vec::new();
    for (module, uses) in graph() {
        for used in uses {
            if stage(&used) > stage(&module) {
                wrong.push(format!("{module} uses {used}"));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the order of the stages:\n{}", wrong.join("\n"));
}

#[test]
fn no_two_modules_import_each_other_even_round_a_loop() {
    let graph = graph();
    let mut loops = BTreeSet::new();
    for start in graph.keys() {
        // Every module reached from `start` by paths that do not go between a folder and its files.
        let mut seen = BTreeSet::new();
        let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
        while let Some((at, path)) = stack.pop() {
            for next in graph.get(&at).into_iter().flatten() {
                if nested(&at, next) {
                    continue;
                }
                if next == start {
                    let mut cycle = path.clone();
                    let first = cycle.iter().enumerate().min_by_key(|(_, m)| *m).map(|(i, _)| i).unwrap();
                    cycle.rotate_left(first);
                    loops.insert(cycle.join(" -> "));
                } else if seen.insert(next.clone()) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    assert!(
        loops.is_empty(),
        "modules that import each other:\n{}",
        loops.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// Where production code outside `src/format/` and `src/generate/` names a format: a word of a
/// format's name (`rupu_netflow` gives `rupu` and `netflow`; the names are read from
/// [`txq::format::all`], so a new format is checked with no change here) among the words of an
/// identifier (split on `_` and case changes: `is_codex`, `RupuUsage`, `rupu_netflow`) or of a
/// string literal (split on every character that is no letter or digit, then on case changes).
/// Comments outside strings are not code and are not read (so a doc comment clap shows as help is
/// not checked here: such help is kept free of format names by hand); a string or identifier is
/// read whatever comment is on its line, so no comment silences the check. A model's name is no
/// exception (`claude-sonnet-4` names the `claude` schema's word): model names live in the price
/// list, which is data, not code.
#[test]
fn no_module_outside_src_format_names_a_format() {
    let words = format_words();
    let mut named = Vec::new();
    for (module, (file, text)) in modules_with_comments() {
        if module.starts_with("format") || module.starts_with("generate") {
            continue;
        }
        let mut by_line: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for (line, word) in format_names_in(&text, &words) {
            by_line.entry(line).or_default().insert(word);
        }
        for (line, words) in by_line {
            let words: Vec<String> = words.into_iter().collect();
            named.push(format!("{file}:{line}: {}", words.join(", ")));
        }
    }
    assert!(named.is_empty(), "format names outside src/format:\n{}", named.join("\n"));
}

/// The words of every format's name, lowercase.
fn format_words() -> BTreeSet<String> {
    txq::format::all().iter().flat_map(|f| f.name.split('_').map(str::to_ascii_lowercase)).collect()
}

/// Each (line, word) where a word of `words` is among the words of a string literal or an
/// identifier of `code` (Rust source, its comments skipped).
fn format_names_in(code: &str, words: &BTreeSet<String>) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (line, token) in tokens(code) {
        // A string over several lines: each word on its own line.
        for (below, text) in token.split('\n').enumerate() {
            for word in split_words(text) {
                if words.contains(&word) {
                    found.push((line + below, word));
                }
            }
        }
    }
    found
}

/// The words of an identifier or a string's text, lowercase: split on every character that is no
/// letter or digit, then where a lowercase letter or digit meets an uppercase one (`RupuUsage`),
/// or an uppercase run meets a word (`HTTPServer`).
fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in text.split(|c: char| !c.is_alphanumeric()).filter(|p| !p.is_empty()) {
        let chars: Vec<char> = part.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let lower_to_upper = !chars[i - 1].is_uppercase() && chars[i].is_uppercase();
            let run_to_word = chars[i - 1].is_uppercase()
                && chars[i].is_uppercase()
                && chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            if lower_to_upper || run_to_word {
                words.push(chars[start..i].iter().collect::<String>().to_lowercase());
                start = i;
            }
        }
        words.push(chars[start..].iter().collect::<String>().to_lowercase());
    }
    words
}

/// The identifiers and string literals of Rust source, each with the (1-based) line it starts
/// on: the text of a string with its escapes (`\n`, `\u{..}`) made spaces, so that no escape joins
/// a word to the next (a line continued with `\` stays a line end). Line and block comments (doc
/// comments too) are skipped; char literals and lifetimes are told apart.
fn tokens(code: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
            }
        } else if c == '"' {
            let start = line;
            let mut text = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    // An escape is a space: `\n`, `\"`, `\\`, `\x41`, `\u{1b}`, a line continued.
                    i += 1;
                    if at(i) == 'u' && at(i + 1) == '{' {
                        while i < chars.len() && chars[i] != '}' {
                            i += 1;
                        }
                    } else if at(i) == 'x' {
                        i += 2;
                    }
                    line += usize::from(at(i) == '\n');
                    text.push(if at(i) == '\n' { '\n' } else { ' ' });
                } else {
                    line += usize::from(chars[i] == '\n');
                    text.push(chars[i]);
                }
                i += 1;
            }
            i += 1;
            out.push((start, text));
        } else if c == '\'' {
            // A char literal (`'x'`, `'\n'`, `'"'`), else a lifetime or label, read on as code.
            if at(i + 1) == '\\' {
                i += 3;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let hashes = chars[i..].iter().take_while(|c| **c == '#').count();
            let raw = matches!(word.as_str(), "r" | "br" | "cr") && at(i + hashes) == '"';
            if raw {
                // A raw string: `r"..."`, `r#"..."#`, to its quote and as many `#` (`r#type` is
                // a raw identifier, read on as code).
                i += hashes + 1;
                let (start, mut text) = (line, String::new());
                while i < chars.len() {
                    if chars[i] == '"'
                        && chars[i + 1..].iter().take(hashes).filter(|c| **c == '#').count() == hashes
                    {
                        i += 1 + hashes;
                        break;
                    }
                    line += usize::from(chars[i] == '\n');
                    text.push(chars[i]);
                    i += 1;
                }
                out.push((start, text));
            } else if !(matches!(word.as_str(), "b" | "c") && at(i) == '"') {
                // (`b"..."` is read as the string that follows.)
                out.push((line, word));
            }
        } else {
            i += 1;
        }
    }
    out
}

#[test]
fn the_checks_see_what_they_look_for() {
    // The reader of imports finds each way a module is named, so the tests above can fail.
    let known: BTreeSet<String> =
        ["scan", "scan::decode", "table::corpus", "table", "sql::session", "text::escape"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let text = "use crate::table::corpus::{Corpus, ProblemLog};\nuse super::decode::RowDecoder;\nlet x = crate::text::escape::path(p);\nuse crate::{sql::session, table};\n";
    let found = uses("scan::exec", text, &known);
    let expected: BTreeSet<String> =
        ["table::corpus", "scan::decode", "text::escape", "sql::session", "table"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    assert_eq!(found, expected);
    assert_eq!(without_tests("a\n#[cfg(test)]\nmod tests {\n    use crate::cli;\n}\nb\n"), "a\nb\n");

    // The reader of format names finds a format named in each way code can name it, whatever
    // comment follows, and passes code that names none.
    let words = format_words();
    let found = |code: &str| format_names_in(code, &words);
    let at = |line: usize, word: &str| vec![(line, word.to_string())];
    assert_eq!(found("let s = \"a rupu run\";"), at(1, "rupu"), "a string");
    assert_eq!(found("let s = \"done.\\nCodex:\";"), at(1, "codex"), "a word after an escape");
    assert_eq!(found("let s = r#\"say \"hi\"\n to gemini\"#;"), at(2, "gemini"), "a raw string");
    assert_eq!(found("let s = \"a \\\n  codex\";"), at(2, "codex"), "a string continued on its next line");
    assert_eq!(found("fn is_codex() {}"), at(1, "codex"), "an identifier");
    assert_eq!(found("struct RupuUsage;"), at(1, "rupu"), "an identifier in camel case");
    assert_eq!(found("let rupu_netflow = 1;"), [(1, "rupu".into()), (1, "netflow".into())]);
    assert_eq!(found("a();\nlet f = crate::format::claude::format();"), at(2, "claude"), "a path");
    assert_eq!(found("x(\"claude\"); // a model family, not a format"), at(1, "claude"));
    assert_eq!(found("x(/* a model family */ \"reeval\");"), at(1, "reeval"), "after a comment");
    assert_eq!(found("let q = '\"'; let s = \"reeval\"; // '"), at(1, "reeval"), "after a char");
    assert_eq!(found("x('\\'', \"'\"); let r#type = \"rupu\";"), at(1, "rupu"), "after an escaped quote");
    assert!(
        found("// rupu\n/// reeval\n//! codex\n/* gemini\n claude */ fn x<'a>() {}").is_empty(),
        "comments"
    );
    assert!(found("let usage = \"calls\"; fn run_id(s: &'static str) -> char { 'r' }").is_empty());
    assert_eq!(split_words("HTTPServer_run_id"), ["http", "server", "run", "id"]);
}
