//! A byte-level JSON reader for lines written the usual way (no control bytes, valid UTF-8):
//! it validates what it returns as serde_json would, finds strings' ends 64 bytes a step, and splits
//! objects into keys and raw values without building anything per value. It declines (`None`)
//! whatever it does not read, valid or not: serde_json then reads the line, and names its damage.

use super::{Event, Raw, RawObject, Want, string};
use std::borrow::Cow;

/// The text of a line the scanner reads: valid UTF-8 with no byte below 0x20 (which JSON allows
/// only as whitespace between tokens, and writers do not put there).
fn line_text(line: &[u8]) -> Option<&str> {
    if has_control_byte(line) {
        return None;
    }
    simdutf8::basic::from_utf8(line).ok()
}

/// Whether any byte is below 0x20, in blocks the compiler vectorises.
fn has_control_byte(bytes: &[u8]) -> bool {
    let mut blocks = bytes.chunks_exact(64);
    for block in &mut blocks {
        if block.iter().fold(false, |any, &b| any | (b < 0x20)) {
            return true;
        }
    }
    blocks.remainder().iter().any(|&b| b < 0x20)
}

/// A line as one object: its entries.
pub(super) fn line_object(line: &[u8]) -> Option<RawObject<'_>> {
    object(line_text(line)?)
}

/// Text that is one object (with spaces around it): its entries.
pub(super) fn object(text: &str) -> Option<RawObject<'_>> {
    let at = spaces(text.as_bytes(), 0);
    let (object, end) = object_at(text, at)?;
    (spaces(text.as_bytes(), end) == text.len()).then_some(object)
}

/// A line as an event: the type's string under `type_key`; the fields under `fields_key`, or the
/// whole object when the fields are beside the type. Declines the lines serde_json would read as
/// damage, so that it names the damage.
pub(super) fn event<'a>(
    line: &'a [u8],
    type_key: &str,
    fields_key: Option<&str>,
    want: Want,
) -> Option<Event<'a>> {
    let text = line_text(line)?;
    let Some(fields_key) = fields_key else {
        let fields = object(text)?;
        let type_name = type_name(fields.get(type_key)?)?;
        return Some(Event { type_name, fields, fields_text: text, line: None });
    };
    let b = text.as_bytes();
    let mut type_raw = None;
    let mut fields: Option<(RawObject<'a>, &'a str)> = None;
    let end = entries(text, spaces(b, 0), |key, value_at| {
        if key == type_key && type_raw.is_none() {
            let end = value_end(b, value_at)?;
            type_raw = Some(Raw(&text[value_at..end]));
            return Some(end);
        }
        if key != fields_key || fields.is_some() {
            return value_end(b, value_at);
        }
        let (found, end) = match (*b.get(value_at)?, want) {
            (b'{', Want::Fields) => object_at(text, value_at).map(|(object, end)| ((object, ""), end))?,
            (b'n', Want::Fields) => ((RawObject::default(), ""), literal(b, value_at, b"null")?),
            (b'{' | b'n', Want::Text) => {
                let end = value_end(b, value_at)?;
                ((RawObject::default(), &text[value_at..end]), end)
            }
            // Fields of another shape are damage.
            _ => return None,
        };
        fields = Some(found);
        Some(end)
    })?;
    if spaces(b, end) != b.len() {
        return None;
    }
    let type_name = type_name(type_raw?)?;
    let (fields, fields_text) = fields.unwrap_or((RawObject::default(), "{}"));
    Some(Event { type_name, fields, fields_text, line: None })
}

/// A type's value, when it is a string.
fn type_name(raw: Raw<'_>) -> Option<Cow<'_, str>> {
    raw.get().starts_with('"').then(|| string(raw)).flatten()
}

/// Past `opening` and the spaces after it.
fn open(b: &[u8], at: usize, opening: u8) -> Option<usize> {
    (*b.get(at)? == opening).then(|| spaces(b, at + 1))
}

fn spaces(b: &[u8], mut at: usize) -> usize {
    while b.get(at) == Some(&b' ') {
        at += 1;
    }
    at
}

/// The object starting at `at`: its entries and the offset past it.
fn object_at(text: &str, at: usize) -> Option<(RawObject<'_>, usize)> {
    let mut object = RawObject::default();
    let end = entries(text, at, |key, value_at| {
        let end = value_end(text.as_bytes(), value_at)?;
        object.entries.push((key, Raw(&text[value_at..end])));
        Some(end)
    })?;
    Some((object, end))
}

/// Walks the object starting at `at`: for each entry, `on_entry` gets its key and where its value
/// starts, and says where the value ends. The offset past the object.
fn entries<'a>(
    text: &'a str,
    at: usize,
    mut on_entry: impl FnMut(Cow<'a, str>, usize) -> Option<usize>,
) -> Option<usize> {
    let b = text.as_bytes();
    let mut at = open(b, at, b'{')?;
    if b.get(at) == Some(&b'}') {
        return Some(at + 1);
    }
    loop {
        let (key, value_at) = key(text, at)?;
        at = spaces(b, on_entry(key, value_at)?);
        match b.get(at)? {
            b',' => at = spaces(b, at + 1),
            b'}' => return Some(at + 1),
            _ => return None,
        }
    }
}

/// The key starting at `at`, and where its value starts (past the colon and spaces).
fn key(text: &str, at: usize) -> Option<(Cow<'_, str>, usize)> {
    let b = text.as_bytes();
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let end = string_end(b, at)?;
    let key = string(Raw(&text[at..end]))?;
    let colon = spaces(b, end);
    (b.get(colon) == Some(&b':')).then(|| (key, spaces(b, colon + 1)))
}

/// The offset past the string starting at `at` (a quote), its escapes checked: 64 bytes a step
/// (tool outputs have an escape every dozen bytes, too often to stop at each), the rest a byte a
/// step.
fn string_end(b: &[u8], at: usize) -> Option<usize> {
    let mut at = at + 1;
    // Whether the first byte of the next block is escaped (a backslash ended the last one).
    let mut escaped_carry = 0;
    while let Some(block) = b.get(at..at + 64).and_then(|w| <&[u8; 64]>::try_from(w).ok()) {
        let escaped = escaped_bits(bits_equal(block, b'\\'), &mut escaped_carry);
        let ends = bits_equal(block, b'"') & !escaped;
        // The escapes inside the string (after its end, bytes are no longer in it).
        let inside = if ends == 0 { u64::MAX } else { (1 << ends.trailing_zeros()) - 1 };
        let mut escapes = escaped & inside;
        while escapes != 0 {
            escape_end(b, at + escapes.trailing_zeros() as usize)?;
            escapes &= escapes - 1;
        }
        if ends != 0 {
            return Some(at + ends.trailing_zeros() as usize + 1);
        }
        at += 64;
    }
    if escaped_carry != 0 {
        at = escape_end(b, at)?;
    }
    loop {
        at = match *b.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' => escape_end(b, at + 1)?,
            _ => at + 1,
        };
    }
}

/// Past the escaped character at `at` (after a backslash): one of `"\/bfnrt`, or `u` and four
/// hex digits.
fn escape_end(b: &[u8], at: usize) -> Option<usize> {
    match b.get(at)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(at + 1),
        b'u' if b.get(at + 1..at + 5)?.iter().all(u8::is_ascii_hexdigit) => Some(at + 5),
        _ => None,
    }
}

/// The bytes of `block` equal to `byte`, a bit each: sixteen bytes compared at once and their
/// top bits gathered (SSE2, which every x86_64 processor has).
#[cfg(target_arch = "x86_64")]
fn bits_equal(block: &[u8; 64], byte: u8) -> u64 {
    use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    let mut bits = 0u64;
    for (i, sixteen) in block.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is part of every x86_64 target, and the load is an unaligned load of the
        // sixteen bytes of `sixteen`, all within the block.
        let equal = unsafe {
            let bytes = _mm_loadu_si128(sixteen.as_ptr().cast::<__m128i>());
            _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(byte as i8)))
        };
        bits |= u64::from(equal as u32 & 0xffff) << (i * 16);
    }
    bits
}

/// The bytes of `block` equal to `byte`, a bit each (compared in a loop the compiler vectorises,
/// then eight bytes of 0/1 gathered into eight bits by one multiplication).
#[cfg(any(not(target_arch = "x86_64"), test))]
fn bits_equal_portable(block: &[u8; 64], byte: u8) -> u64 {
    let mut equal = [0u8; 64];
    for (e, &c) in equal.iter_mut().zip(block) {
        *e = u8::from(c == byte);
    }
    equal.chunks_exact(8).enumerate().fold(0, |bits, (i, eight)| {
        let eight = u64::from_le_bytes(<[u8; 8]>::try_from(eight).unwrap_or_default());
        bits | (eight.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (i * 8)
    })
}

#[cfg(not(target_arch = "x86_64"))]
use bits_equal_portable as bits_equal;

/// The escaped bytes of a block (each after an odd run of backslashes), given its backslashes and
/// whether its first byte is escaped; `carry` becomes whether the next block's first byte is.
/// (simdjson's branchless escape finder.)
fn escaped_bits(backslashes: u64, carry: &mut u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let backslashes = backslashes & !*carry;
    let follows_escape = (backslashes << 1) | *carry;
    let odd_starts = backslashes & !EVEN & !follows_escape;
    let (even_starts, overflow) = odd_starts.overflowing_add(backslashes);
    *carry = u64::from(overflow);
    (EVEN ^ (even_starts << 1)) & follows_escape
}

fn literal(b: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    b.get(at..)?.starts_with(word).then_some(at + word.len())
}

fn digits(b: &[u8], mut at: usize) -> usize {
    while b.get(at).is_some_and(u8::is_ascii_digit) {
        at += 1;
    }
    at
}

/// The offset past the number at `at`: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn number_end(b: &[u8], mut at: usize) -> Option<usize> {
    if b.get(at) == Some(&b'-') {
        at += 1;
    }
    at = match b.get(at)? {
        b'0' => at + 1,
        b'1'..=b'9' => digits(b, at + 1),
        _ => return None,
    };
    if b.get(at) == Some(&b'.') {
        let end = digits(b, at + 1);
        if end == at + 1 {
            return None;
        }
        at = end;
    }
    if matches!(b.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(b.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let end = digits(b, at);
        if end == at {
            return None;
        }
        at = end;
    }
    Some(at)
}

/// The open arrays and objects around a value: a bit each, in a word while they fit.
#[derive(Default)]
struct Nesting {
    depth: usize,
    bits: u64,
    deeper: Vec<bool>,
}

impl Nesting {
    fn push(&mut self, object: bool) {
        if self.depth < 64 {
            self.bits = (self.bits & !(1 << self.depth)) | (u64::from(object) << self.depth);
        } else {
            self.deeper.push(object);
        }
        self.depth += 1;
    }

    /// Whether the innermost is an object; `None` at the top.
    fn top(&self) -> Option<bool> {
        match self.depth {
            0 => None,
            d if d <= 64 => Some(self.bits & (1 << (d - 1)) != 0),
            _ => self.deeper.last().copied(),
        }
    }

    fn pop(&mut self) {
        if self.depth > 64 {
            self.deeper.pop();
        }
        self.depth -= 1;
    }
}

/// The offset past the value starting at `at` (any depth, without recursion).
fn value_end(b: &[u8], mut at: usize) -> Option<usize> {
    let mut nesting = Nesting::default();
    loop {
        // A value.
        at = match *b.get(at)? {
            b'"' => string_end(b, at)?,
            opening @ (b'{' | b'[') => {
                let (object, inside) = (opening == b'{', spaces(b, at + 1));
                let closing = if object { b'}' } else { b']' };
                if b.get(inside) == Some(&closing) {
                    inside + 1
                } else {
                    nesting.push(object);
                    at = if object { after_key(b, inside)? } else { inside };
                    continue;
                }
            }
            b't' => literal(b, at, b"true")?,
            b'f' => literal(b, at, b"false")?,
            b'n' => literal(b, at, b"null")?,
            b'-' | b'0'..=b'9' => number_end(b, at)?,
            _ => return None,
        };
        // What follows it: the next value of the innermost array or object, or their ends.
        loop {
            let Some(in_object) = nesting.top() else { return Some(at) };
            at = spaces(b, at);
            match (*b.get(at)?, in_object) {
                (b',', true) => {
                    at = after_key(b, spaces(b, at + 1))?;
                    break;
                }
                (b',', false) => {
                    at = spaces(b, at + 1);
                    break;
                }
                (b'}', true) | (b']', false) => {
                    nesting.pop();
                    at += 1;
                }
                _ => return None,
            }
        }
    }
}

/// Past the key at `at` (not decoded: serde_json checks no more of keys it skips), the colon and
/// the spaces: where the value starts.
fn after_key(b: &[u8], at: usize) -> Option<usize> {
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let colon = spaces(b, string_end(b, at)?);
    (b.get(colon) == Some(&b':')).then(|| spaces(b, colon + 1))
}

#[cfg(test)]
mod tests;
