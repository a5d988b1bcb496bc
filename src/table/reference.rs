//! The reference of every table and column, rendered from the format descriptions, so that
//! `docs/tables.md` says exactly what the code does (a test keeps the file up to date).

use crate::format::Format;
use crate::infer::stats::FormatStats;
use crate::table::event_table::{
    all_tables, context_and_common, context_columns, errors_table, event_tables, events_table, lines_tables,
};
use std::fmt::Write;

/// `docs/tables.md`.
pub fn tables_markdown(formats: &[Format]) -> String {
    let mut out = String::new();
    let shared = shared_names(formats);
    render_intro(&mut out, formats, &shared);
    render_shared_names(&mut out, &shared);
    let mut seen_schemas = Vec::new();
    for format in formats {
        let first_of_schema = !seen_schemas.contains(&format.name);
        seen_schemas.push(format.name);
        render_format(&mut out, formats, format, first_of_schema);
    }
    out
}

/// The page's opening: how tables are named and read, its examples taken from the formats (the
/// first schema, a name it shares with a later one, a type only a later schema documents).
fn render_intro(out: &mut String, formats: &[Format], shared: &[(String, Vec<&str>)]) {
    let first = formats.first().map_or("<schema>", |f| f.name);
    let example = shared
        .iter()
        .find(|(_, schemas)| schemas.first() == Some(&first))
        .map_or("<table>", |(n, _)| n.as_str());
    let own = formats.first().map(table_names).unwrap_or_default();
    let (unknown, owner) = formats
        .iter()
        .filter(|f| f.name != first)
        .flat_map(|f| f.events.iter().map(move |e| (f.table_naming.apply(e.type_name), f.name)))
        .find(|(name, _)| !own.contains(name))
        .unwrap_or_else(|| ("<type>".into(), "<schema>"));
    let _ = write!(
        out,
        "\
# Tables

<!-- Generated from src/format/*.rs by `TXQ_BLESS=1 cargo test --test integration docs`; do not edit. -->

Every event type of every transcript format is a table, in a schema named after the format
(`{first}.{example}`). Unqualified names resolve in the formats that have transcripts, in the order of
this page (`{example}` is `{first}.{example}`); a qualified name always works. Each event table has its
format's context columns first, then the documented fields of the type, then every field found
in the data that no document names (its type inferred from the values: text, bigint, double,
boolean, or JSON text when the values are of mixed or nested shapes). A type found in the data
that no document names becomes a table too, named as its type where that is an SQL name no other
table of its schema has.

Names from the data never break a table. A type or field whose name is not an SQL identifier is
named as one: ASCII letters lowercased (`_` before a capital after a small letter or a digit:
`inputTokens` is `input_tokens`), digits and `_` kept, every other character `_`, `type_` (for a
table) or `field_` (for a column) in front of an empty name or one starting with a digit, and a
name over 64 characters cut, with 8 hex digits of a hash of the whole name after it. A type whose
name is then taken (by a table of txq's own: `runs`, `events`, `errors`, `files`, a documented
type, or by another type: `a-b` beside `a_b`) gets `type_` in front, then `_2`, `_3`, ... after
while it is still taken; types already named as identifiers keep their names first. Each such
rename is named in a warning with the file and line where the type first appears:

```text
txq: warning: ./run_2.jsonl:7: event type \"runs\" is table {first}.type_runs (runs is a table of txq's own or of another type)
```

The default schema also holds the normalized tables `calls`, `tool_calls`, `sessions` and
`rate_limits`: every harness's model calls, tool calls, sessions and reported rate-limit windows
with one set of columns, documented with their accounting in [harnesses.md](harnesses.md); and
`git_commits`, the commits of the repositories the sessions ran in ([harnesses.md](harnesses.md#git)).

`events.type` always holds the type as written. An unqualified name finds a table a format
defines (its documented types, views, `events`, `errors`, `files`) before a table of a type
found in the data: an unknown {first} type `{unknown}` is `{first}.{unknown}`, and `{unknown}` stays {owner}'s.

Types: `text` is Utf8, `bigint` Int64, `double` Float64, `timestamp (UTC)` a timestamp in
microseconds with time zone UTC, `json text` the value's JSON text for the JSON functions
(`input->>'command'`, `json_get_str(input, 'command')`), `list<..>` an Arrow list and
`struct<..>` an Arrow struct (`outcome['class']`). A missing key reads as null unless its row
says otherwise; a value of the wrong type reads as null and is listed in `errors`. A field whose
name is taken by a context column is named `data_<name>` (`turn_end.data_turn_idx`).

Reading rules. A key repeated in one JSON object is read by its first value, everywhere: the
event's type, the key its fields are under (`data`), every column (nested ones too), the type
the inference pass gives a column, and the JSON functions over `events.data` (which holds the
fields' text as written, repeats included). JavaScript's `JSON.parse`, jq and serde_json keep
the last instead. A timestamp column reads RFC 3339 text (`2026-10-07T09:14:03Z`, any offset,
fractions below a microsecond dropped; also a space for the `T`, no offset meaning UTC, or a
date alone); every year from 0000 to 9999 fits, and a leap second (`23:59:60`) reads as the
next second's start.

"
    );
}

/// The tables a format defines, by name: its event tables, views and `files`.
fn table_names(format: &Format) -> Vec<String> {
    let mut names: Vec<String> =
        all_tables(format, &FormatStats::default()).into_iter().map(|t| t.name).collect();
    names.extend(format.views.iter().map(|v| v.name.to_string()));
    if format.lines_table.is_none() {
        names.push("files".into());
    }
    names
}

/// The table names found in more than one schema, each with those schemas in the order an
/// unqualified name resolves.
fn shared_names(formats: &[Format]) -> Vec<(String, Vec<&str>)> {
    let mut owners: Vec<(String, Vec<&str>)> = Vec::new();
    for format in formats {
        for name in table_names(format) {
            match owners.iter_mut().find(|(n, _)| *n == name) {
                Some((_, schemas)) if !schemas.contains(&format.name) => schemas.push(format.name),
                Some(_) => {}
                None => owners.push((name, vec![format.name])),
            }
        }
    }
    owners.retain(|(_, schemas)| schemas.len() > 1);
    owners
}

/// The table names found in more than one schema, and which one an unqualified name means.
fn render_shared_names(out: &mut String, shared: &[(String, Vec<&str>)]) {
    let listed: Vec<String> =
        shared.iter().map(|(name, schemas)| format!("`{name}` ({})", schemas.join(", "))).collect();
    let (name, schemas) = shared.first().map_or(("<table>", &[][..]), |(n, s)| (n.as_str(), s.as_slice()));
    let _ = writeln!(
        out,
        "Names in more than one schema: {}. Unqualified, such a name means the table of the first \
         schema in that list whose format has transcripts in the paths read (with both formats \
         present, {}'s); qualify it (`{}.{name}`) to be sure.\n",
        listed.join(", "),
        schemas.first().unwrap_or(&"<schema>"),
        schemas.get(1).unwrap_or(&"<schema>"),
    );
}

fn render_format(out: &mut String, formats: &[Format], format: &Format, first_of_schema: bool) {
    let stats = FormatStats::default();
    if let Some(lines) = &format.lines_table {
        let _ = writeln!(out, "### `{}`\n\n{} ({}).\n", lines.name, capitalize(lines.about), format.about);
        for table in lines_tables(format, lines) {
            if table.name != lines.name {
                let _ = writeln!(out, "### `{}`\n\n{}.\n", table.name, capitalize(&table.about));
            }
            column_table(
                out,
                table.columns.iter().map(|c| (c.name.as_str(), c.data_type_name(), c.about.as_str())),
            );
        }
        return;
    }
    if first_of_schema {
        let _ = writeln!(out, "## Schema `{}`\n", format.name);
    }
    let _ = writeln!(out, "{}.\n", capitalize(format.about));
    let roots: Vec<String> = format.default_roots.iter().map(|group| group.join(" or ")).collect();
    if !roots.is_empty() {
        let _ = writeln!(out, "With no path given, txq reads {}.\n", roots.join(", and "));
    }
    if let Some(beside) = format.beside {
        // The folder above the searched one in a default place (`.rupu` of `.rupu/transcripts`).
        let parent = formats
            .iter()
            .flat_map(|f| f.default_roots.iter().flat_map(|group| group.iter()))
            .find_map(|root| root.strip_suffix(beside.searched)?.strip_suffix('/'))
            .map_or("<dir>", |parent| parent.rsplit('/').next().unwrap_or(parent));
        let _ = writeln!(
            out,
            "Whenever txq searches a directory named `{}` (given, or a default place), it searches the \
             `{}` directory beside it too, if there is one (`{parent}/{}` beside `{parent}/{}`); a file given \
             by its path, or found in a `{}/` folder of a directory given, is read as well.\n",
            beside.searched, beside.folder, beside.folder, beside.searched, beside.folder
        );
    }
    if let Some(required) = format.required_type {
        let others = match format.not_transcripts {
            [] => String::new(),
            named => format!(": its {} share the naming", crate::text::words::listed(named)),
        };
        let _ = writeln!(
            out,
            "A file with no `{required}` line anywhere is not a transcript, whatever else it holds (the rule the format's own readers apply{others}): none of its lines is in any table, and `files` lists it with `transcript` false and why in `skipped`. One warning line names the first such file and counts the others; a file that is not JSON Lines at all is named on a line of its own; an empty file, or one whose first line is still being written, is listed without a warning.\n"
        );
    }
    let _ = writeln!(out, "### Context columns (on every table of `{}`)\n", format.name);
    column_table(
        out,
        context_columns(format).iter().map(|c| (c.name.as_str(), c.data_type_name(), c.about.as_str())),
    );
    if !format.common_fields.is_empty() {
        let _ = writeln!(
            out,
            "### Common fields (on every event table of `{}`, after the context columns)\n",
            format.name
        );
        let mut common = context_and_common(format);
        common.drain(..format.context.len());
        column_table(out, common.iter().map(|c| (c.name.as_str(), c.data_type_name(), c.about.as_str())));
    }

    let own: Vec<String> = format.normalized.iter().map(|c| format!("`{}`", c.table.name())).collect();
    if !own.is_empty() {
        let _ = writeln!(
            out,
            "### {}\n\nThe rows this format gives of the normalized table{} of the same name in the default \
             schema, its columns: `{}.{}` is `{}` of this format alone.\n",
            own.join(", "),
            if own.len() == 1 { "" } else { "s" },
            format.name,
            format.normalized[format.normalized.len() - 1].table.name(),
            format.normalized[format.normalized.len() - 1].table.name(),
        );
    }
    for view in &format.views {
        let _ = writeln!(out, "### `{}`\n\n{}.\n", view.name, capitalize(view.about));
        let _ = writeln!(out, "| column | from |\n|---|---|");
        for (name, about) in view.columns {
            let _ = writeln!(out, "| `{name}` | {} |", about.replace('|', "\\|"));
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "### `files`\n\nOne row per file of the format's naming, transcripts first: the context columns that \
         belong to a file, then `bytes` (its size when read), `damaged_lines` (lines listed in `errors` as \
         damaged; null for a file that is no transcript), `transcript` (boolean) and `skipped` (why a file \
         that is no transcript is not read: `no run_start line`, `not JSON Lines: ...`, `no whole line yet \
         ...`; null for a transcript).\n"
    );
    for table in [events_table(format, &stats), errors_table(format)] {
        let _ = writeln!(
            out,
            "### `{}`\n\n{}; the context columns, then:\n",
            table.name,
            capitalize(&table.about)
        );
        let extra = table.columns.iter().skip(format.context.len());
        column_table(out, extra.map(|c| (c.name.as_str(), c.data_type_name(), c.about.as_str())));
    }
    let skip = format.context.len() + format.common_fields.len();
    for table in event_tables(format, &stats) {
        let spec = format.events.iter().find(|e| format.table_naming.apply(e.type_name) == table.name);
        let _ = write!(out, "### `{}`\n\n{}", table.name, capitalize(&table.about));
        if let Some(spec) = spec {
            if table.name != spec.type_name {
                let _ = write!(out, " (type `{}`)", spec.type_name);
            }
            if !spec.fields_path.is_empty() {
                let _ = write!(out, " (the object at `{}`)", spec.fields_path.join("."));
            }
        }
        let _ = writeln!(out, ".\n");
        let fields: Vec<_> = table.columns.iter().skip(skip).collect();
        if fields.is_empty() {
            let _ =
                writeln!(out, "No documented fields of its own: its other columns are found in the data.\n");
            continue;
        }
        column_table(out, fields.iter().map(|c| (c.name.as_str(), c.data_type_name(), c.about.as_str())));
    }
}

fn column_table<'a>(out: &mut String, rows: impl Iterator<Item = (&'a str, String, &'a str)>) {
    let _ = writeln!(out, "| column | type | meaning |\n|---|---|---|");
    for (name, kind, about) in rows {
        let _ = writeln!(out, "| `{name}` | {kind} | {} |", about.replace('|', "\\|"));
    }
    out.push('\n');
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}
