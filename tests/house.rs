//! The shape of the source tree: each folder of `src/` is a stage of the pipeline that imports
//! only from the stages below it, no two modules import each other (directly or round a loop),
//! and nothing outside `src/format/` names a format. Read from the source text, test code left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The stages, lowest first: a module may use its own stage and those before it.
const STAGES: [&str; 14] = [
    "text", "error", "generate", "format", "source", "json", "infer", "table", "scan", "sql", "cluster",
    "export", "report", "cli",
];

/// Every module of the library (`infer::cache` for `src/infer/cache/mod.rs`), with the code of its
/// file outside `#[cfg(test)]` modules.
fn modules() -> BTreeMap<String, String> {
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
        out.insert(parts.join("::"), without_tests(&text));
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
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            // The item that follows: one line ending in `;`, or a block to its brace at that indent.
            let Some(item) = lines.next() else { break };
            if item.trim_end().ends_with('{') {
                let indent = item.len() - item.trim_start().len();
                for inner in lines.by_ref() {
                    if inner.len() - inner.trim_start().len() == indent && inner.trim() == "}" {
                        break;
                    }
                }
            }
            continue;
        }
        if line.trim_start().starts_with("//") {
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

#[test]
fn no_module_outside_src_format_names_a_format() {
    let formats: Vec<String> = txq::format::all().iter().map(|f| f.name.to_string()).collect();
    let mut named = Vec::new();
    for (module, text) in modules() {
        if module.starts_with("format") || module.starts_with("generate") {
            continue;
        }
        for format in &formats {
            for (n, line) in text.lines().enumerate() {
                let lower = line.to_ascii_lowercase();
                // A format named in code: `"rupu"` as a value, or its module. A line that says it
                // names a model family (Anthropic's `claude` models) names no format.
                if lower.contains("a model family, not a format") {
                    continue;
                }
                if lower.contains(&format!("\"{format}\"")) || lower.contains(&format!("format::{format}")) {
                    named.push(format!("{module}: {format}: {}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(named.is_empty(), "format names outside src/format:\n{}", named.join("\n"));
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
}
