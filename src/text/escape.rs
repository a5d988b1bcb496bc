//! Text from the data and paths from the file system as a terminal may be given them: control
//! characters (C0, DEL, C1), the characters that reorder or break lines, and bytes of a path that
//! are not UTF-8 written as visible escapes, so that nothing read can move the cursor, recolour,
//! retitle or clear the screen. The one place this is decided; docs/cli.md describes the forms.

use std::borrow::Cow;
use std::fmt::Write;
use std::path::Path;

/// Whether `c` is shown escaped: C0 controls (tab, newline and ESC among them), DEL, C1
/// controls (U+0080–U+009F), the line and paragraph separators, and the bidirectional
/// embeddings, overrides and isolates (which reorder what follows them on the line).
fn escaped(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// `text` with every character a terminal would act on written visibly: `\n`, `\r`, `\t`; the
/// other C0 controls and DEL as `\x1b`, `\x7f`; C1 controls and the other characters
/// [`escaped`] names as `\u{9b}`, `\u{202e}`. Everything else, backslashes included, is as is.
pub(crate) fn text(text: &str) -> Cow<'_, str> {
    if !text.chars().any(escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escaped(c) { push_escaped(&mut out, c) } else { out.push(c) }
    }
    Cow::Owned(out)
}

/// A message of one or more lines (a warning, an error) as [`text`] shows each line: the line
/// breaks txq put there stay, any other control character is escaped. Paths and values inside a
/// message should be put there with [`path`] or [`text`] already, so that a newline of theirs is
/// escaped too.
pub fn message(message: &str) -> Cow<'_, str> {
    if !message.chars().any(|c| c != '\n' && escaped(c)) {
        return Cow::Borrowed(message);
    }
    Cow::Owned(message.split('\n').map(text).collect::<Vec<_>>().join("\n"))
}

/// The path as text, exactly, except that each byte that is not part of UTF-8 is written
/// `\xNN` (`\xff`): what the `file` column holds, and what tells two such paths apart (where
/// `Path::display` would make both U+FFFD).
pub(crate) fn path_text(path: &Path) -> Cow<'_, str> {
    let bytes = path.as_os_str().as_encoded_bytes();
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    Cow::Owned(out)
}

/// The path for a terminal: [`path_text`], then [`text`] (a newline in a folder name is `\n`).
pub(crate) fn path(path: &Path) -> String {
    text(&path_text(path)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_written_visibly_and_the_rest_as_is() {
        assert_eq!(text("plain ✅ a\\nb"), "plain ✅ a\\nb");
        assert!(matches!(text("plain"), Cow::Borrowed(_)));
        assert_eq!(text("\u{1b}[31mred"), "\\x1b[31mred");
        assert_eq!(text("\u{1b}]0;title\u{7}"), "\\x1b]0;title\\x07");
        assert_eq!(text("a\nb\tc\rd\u{0}e\u{7f}"), "a\\nb\\tc\\rd\\x00e\\x7f");
        assert_eq!(text("\u{9b}2J \u{85}"), "\\u{9b}2J \\u{85}");
        assert_eq!(text("abc\u{202e}def\u{2028}"), "abc\\u{202e}def\\u{2028}");
    }

    #[test]
    fn messages_keep_their_own_line_breaks() {
        assert_eq!(message("one\n  hint: two"), "one\n  hint: two");
        assert_eq!(message("one \u{1b}[2J\ntwo\t"), "one \\x1b[2J\ntwo\\t");
    }

    #[cfg(unix)]
    #[test]
    fn bytes_that_are_not_utf8_are_written_as_hex() {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(b"runs/a\xffb\xfe\n/t.jsonl");
        assert_eq!(path_text(Path::new(name)), "runs/a\\xffb\\xfe\n/t.jsonl");
        assert_eq!(path(Path::new(name)), "runs/a\\xffb\\xfe\\n/t.jsonl");
        assert_eq!(path(Path::new("runs/ok.jsonl")), "runs/ok.jsonl");
    }
}
