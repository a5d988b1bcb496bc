//! The scanner against serde_json: on every line it reads, the same event; on the lines written
//! the usual way, it reads them (else the fast path would be dead code).

use super::super::{Want, parse_event_serde, parse_line_object_serde};
use super::{event, line_object};
use crate::generate::rng::Rng;

const ENVELOPES: [Option<&str>; 2] = [Some("data"), None];

/// Checks that whatever the scanner reads, serde_json reads the same; returns whether it read it.
fn agrees(line: &[u8]) -> bool {
    let mut read = false;
    for fields_key in ENVELOPES {
        for want in [Want::Fields, Want::Text] {
            if let Some(fast) = event(line, "type", fields_key, want) {
                let slow = parse_event_serde(line, "type", fields_key, want);
                assert_eq!(
                    Ok(&fast),
                    slow.as_ref(),
                    "{:?} {fields_key:?} {want:?}",
                    String::from_utf8_lossy(line)
                );
                read = true;
            }
        }
    }
    if let Some(fast) = line_object(line) {
        let slow = parse_line_object_serde(line);
        assert_eq!(Ok(&fast), slow.as_ref(), "{:?}", String::from_utf8_lossy(line));
    }
    read
}

const USUAL: &[&str] = &[
    r#"{"type":"usage","data":{"model":"m","input_tokens":12,"cost":-1.5e-3,"ok":true,"x":null}}"#,
    r#"{"type":"tool_result","data":{"output":"line one\nline \"two\"\t\u00e9\\ \ud83d\ude00 end","args":{"a":[1,[2,{}],[]],"b":{}}}}"#,
    r#"{"data":{},"type":"run_start"}"#,
    r#"{"type":"t"}"#,
    r#"{"type":"t","data":null}"#,
    r#"{ "type" : "spaced" , "data" : { "k" : [ 1 , 2 ] } } "#,
    r#"{"type":"t\u0041","data":{"k\u0042":0.5,"":"","n":-0}}"#,
    r#"{"turn":0,"type":"prompt","text":"hi","atMs":1700000000000}"#,
    r#"{"type":"é","data":{"ключ":"значение"}}"#,
    r#"{"type":"a","type":"b","data":{"k":1},"data":{"k":2}}"#,
];

#[test]
fn the_usual_lines_are_read_by_the_scanner_as_serde_json_reads_them() {
    for line in USUAL {
        assert!(agrees(line.as_bytes()), "the scanner declined {line}");
    }
}

#[test]
fn damaged_and_unusual_lines_are_left_to_serde_json() {
    let declined: &[&[u8]] = &[
        br#"{"type":"a","data":{"k":01}}"#,
        br#"{"type":"a","data":{"k":1.}}"#,
        br#"{"type":"a","data":{"k":1e}}"#,
        br#"{"type":"a","data":{"k":-}}"#,
        br#"{"type":"a","data":{"k":"\x"}}"#,
        br#"{"type":"a","data":{"k":"\u12G4"}}"#,
        br#"{"type":"a","data":{"k":tru}}"#,
        br#"{"type":"a","data":{"k":[1,]}}"#,
        br#"{"type":"a","data":{"k":{"a":1,}}}"#,
        br#"{"type":"a","data":{"k":1}} x"#,
        br#"{"type":"a","data":{"k":1}"#,
        br#"{"type":"a","data":[1]}"#,
        br#"{"type":7,"data":{}}"#,
        br#"{"data":{}}"#,
        b"{\"type\":\"a\",\"data\":{\"k\":\"tab\there\"}}",
        b"{\"type\":\"a\",\t\"data\":{}}",
        b"{\"type\":\"\xff\"}",
        b"[1,2]",
        b"",
    ];
    for line in declined {
        agrees(line);
        let nested = event(line, "type", Some("data"), Want::Fields);
        assert!(nested.is_none(), "{:?}", String::from_utf8_lossy(line));
    }
}

#[test]
fn a_type_with_a_lone_surrogate_reads_with_a_replacement_character_either_way() {
    let line = br#"{"type":"a\ud800","data":{}}"#;
    assert!(agrees(line));
    let event = event(line, "type", Some("data"), Want::Fields).expect("the scanner reads it");
    assert_eq!(event.type_name, "a\u{FFFD}");
}

#[test]
fn nesting_beyond_a_word_and_deeper_than_serde_json_recurses() {
    for depth in [1, 63, 64, 65, 200, 100_000] {
        let value = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let line = format!(
            r#"{{"type":"deep","data":{{"v":{value},"o":{}1{}}}}}"#,
            r#"{"a":"#.repeat(depth),
            "}".repeat(depth)
        );
        assert!(agrees(line.as_bytes()), "depth {depth}");
        let unbalanced =
            format!(r#"{{"type":"deep","data":{{"v":{}1{}}}}}"#, "[".repeat(depth), "]".repeat(depth - 1));
        agrees(unbalanced.as_bytes());
        assert!(event(unbalanced.as_bytes(), "type", Some("data"), Want::Fields).is_none());
    }
}

/// Seeded mutations of the usual lines: a byte changed, dropped or doubled, or a JSON token put
/// in; whatever the scanner still reads must be what serde_json reads.
#[test]
fn mutated_lines_read_alike() {
    const TOKENS: &[&[u8]] = &[
        b"\"", b"\\", b",", b":", b"{", b"}", b"[", b"]", b"0", b"-", b".", b"e", b"u", b" ", b"null",
        b"\\u00",
    ];
    let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
    let mut next = |n: usize| rng.size(0, n - 1);
    let (mut read, mut total) = (0, 0);
    for _ in 0..40_000 {
        let mut line = USUAL[next(USUAL.len())].as_bytes().to_vec();
        for _ in 0..=next(3) {
            let at = next(line.len() + 1);
            match next(4) {
                0 if at < line.len() => line[at] = next(128) as u8,
                1 if at < line.len() => {
                    line.remove(at);
                }
                2 if at < line.len() => line.insert(at, line[at]),
                _ => {
                    let token = TOKENS[next(TOKENS.len())];
                    line.splice(at..at, token.iter().copied());
                }
            }
        }
        total += 1;
        read += usize::from(agrees(&line));
    }
    // Some mutations leave valid events: the scanner must have read a share of them.
    assert!(read > total / 20, "the scanner read {read} of {total}");
}

/// A line cut off anywhere (a crash mid-write) is declined, never read past its end.
#[test]
fn every_prefix_of_a_usual_line_is_declined_or_read_alike() {
    for line in USUAL {
        for end in 0..line.len() {
            agrees(&line.as_bytes()[..end]);
        }
    }
}

/// The end of a string, found 64 bytes a step, is where a byte-by-byte reading finds it, for
/// strings of runs of backslashes, quotes and escapes falling in and across blocks.
#[test]
fn string_ends_are_found_as_byte_by_byte() {
    fn byte_by_byte(b: &[u8]) -> Option<usize> {
        let mut at = 1;
        loop {
            at = match *b.get(at)? {
                b'"' => return Some(at + 1),
                b'\\' => match *b.get(at + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at + 2,
                    b'u' if b.get(at + 2..at + 6)?.iter().all(u8::is_ascii_hexdigit) => at + 6,
                    _ => return None,
                },
                _ => at + 1,
            };
        }
    }
    const PIECES: &[&[u8]] = &[
        b"a",
        b"\\",
        b"\\\\",
        b"\\\"",
        b"\"",
        b"\\n",
        b"\\u00e9",
        b"\\u00",
        b"\\x",
        b"x",
        b"\xc3\xa9",
        b"z",
    ];
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let mut next = |n: usize| rng.size(0, n - 1);
    for _ in 0..20_000 {
        let mut text = b"\"".to_vec();
        let target = next(300);
        while text.len() < target {
            let piece = PIECES[next(PIECES.len())];
            // Mostly plain bytes, so that strings run across blocks.
            let piece = if next(3) == 0 { piece } else { &b"abcdefghij"[..next(10) + 1] };
            text.extend_from_slice(piece);
        }
        text.extend_from_slice(b"\" tail \\\"");
        assert_eq!(super::string_end(&text, 0), byte_by_byte(&text), "{:?}", String::from_utf8_lossy(&text));
    }
}

#[test]
fn the_bytes_of_a_block_equal_to_one_are_found_as_the_portable_loop_finds_them() {
    let mut rng = Rng::new(11);
    for round in 0..2000 {
        let mut block = [0u8; 64];
        for b in &mut block {
            // Mostly the bytes looked for, in some rounds any byte (those over 127 included).
            *b = match round % 3 {
                0 => [b'"', b'\\', b'a', 0xff][rng.below(4) as usize],
                _ => rng.below(256) as u8,
            };
        }
        for byte in [b'"', b'\\', 0xff, 0] {
            assert_eq!(
                super::bits_equal(&block, byte),
                super::bits_equal_portable(&block, byte),
                "{block:?}"
            );
        }
    }
}
