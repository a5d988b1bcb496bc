//! Splitting a file's bytes, read block by block, into numbered lines: LF, CRLF or a CR alone, a
//! leading UTF-8 BOM dropped, NUL padding before a line dropped, empty lines skipped, the
//! unterminated tail told apart, over-long lines cut off, and a long line not ended yet kept in
//! an unnamed file rather than in memory until it ends.

use std::io::{Read, Seek, SeekFrom, Write};

/// What the splitter hands over for each line.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// A whole line (its terminator removed), numbered from 1.
    Whole { number: u64, bytes: &'a [u8] },
    /// The last line of the file, with no line end after it: whole, or a write cut off.
    Unterminated { number: u64, bytes: &'a [u8] },
    /// A line longer than the limit; its bytes are dropped as they arrive.
    TooLong { number: u64, length: u64, head: &'a [u8] },
}

/// Where a [`LineSplitter`] stopped between two lines: what a splitter reading on from there
/// needs to number the lines as a read of the whole file would.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct SplitPoint {
    /// The number the next line gets.
    pub(crate) next_number: u64,
    /// The last line ended with a CR: a LF first is the rest of its CRLF.
    pub(crate) after_cr: bool,
}

/// How many leading bytes of an over-long line are kept for the error report.
const HEAD_BYTES: usize = 256;

/// The UTF-8 byte order mark, dropped at the start of a file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// How much of a line not ended yet is held in memory: past it, the line is written to an
/// unnamed file until it ends (then read back, to be read as any line) or passes the limit (then
/// dropped), so that a line over the limit costs a few blocks of memory, not the limit.
const HOLD_BYTES: usize = 2 * crate::source::read::BLOCK_BYTES as usize;

/// A line not ended yet, written aside: an unnamed temporary file (gone however txq ends), and
/// how many of the line's bytes it holds.
#[derive(Debug)]
struct Spill {
    file: std::fs::File,
    len: u64,
}

impl Spill {
    /// A spill holding `bytes`; `None` where no temporary file can be made or written (the line
    /// is then held in memory).
    fn of(bytes: &[u8]) -> Option<Spill> {
        let mut file = tempfile::tempfile().ok()?;
        file.write_all(bytes).ok()?;
        Some(Spill { file, len: bytes.len() as u64 })
    }

    fn push(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.file.write_all(bytes)?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// The line's bytes, with `more` after them.
    fn read_back(mut self, more: &[u8]) -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(self.len as usize + more.len());
        self.file.seek(SeekFrom::Start(0))?;
        self.file.read_to_end(&mut bytes)?;
        bytes.extend_from_slice(more);
        Ok(bytes)
    }
}

/// Splits blocks of bytes into lines, keeping the unfinished tail of one block for the next.
#[derive(Debug)]
pub struct LineSplitter {
    carry: Vec<u8>,
    next_number: u64,
    at_start: bool,
    max_line_bytes: usize,
    /// Bytes of the current over-long line seen so far (0 when not inside one); its first
    /// bytes are kept in `carry` for the report.
    overflow: u64,
    /// The last byte fed ended a line with a CR: a LF right after it ends no other line.
    after_cr: bool,
    /// The line not ended yet, once longer than `hold_bytes`: its first bytes stay in `carry`.
    spill: Option<Spill>,
    /// How much of a line not ended yet is held in memory before it is spilled.
    hold_bytes: usize,
}

impl LineSplitter {
    /// A splitter that reports lines longer than `max_line_bytes` instead of holding them.
    pub fn new(max_line_bytes: usize) -> Self {
        Self {
            carry: Vec::new(),
            next_number: 1,
            at_start: true,
            max_line_bytes,
            overflow: 0,
            after_cr: false,
            spill: None,
            hold_bytes: HOLD_BYTES,
        }
    }

    /// A splitter that writes a line aside once `hold_bytes` of it are held (tests spill lines of
    /// a few bytes).
    #[cfg(test)]
    fn holding(max_line_bytes: usize, hold_bytes: usize) -> Self {
        Self { hold_bytes, ..Self::new(max_line_bytes) }
    }

    /// A splitter that goes on reading a file where an earlier one stopped, at the end of a whole
    /// line ([`LineSplitter::stopped_at`]): no byte order mark is looked for, and lines are
    /// numbered on.
    pub(crate) fn resuming(max_line_bytes: usize, at: SplitPoint) -> Self {
        Self {
            next_number: at.next_number,
            at_start: at.next_number == 1 && !at.after_cr,
            after_cr: at.after_cr,
            ..Self::new(max_line_bytes)
        }
    }

    /// Where the lines handed over so far end, after `fed` bytes of the file were fed: the bytes
    /// of the line not ended yet are not counted, so a splitter [`LineSplitter::resuming`] from
    /// the returned offset reads that line whole once its end is written.
    pub(crate) fn stopped_at(&self, fed: u64) -> (u64, SplitPoint) {
        let pending = match &self.spill {
            _ if self.overflow > 0 => self.overflow,
            Some(spill) => spill.len,
            None => self.carry.len() as u64,
        };
        // A BOM held back at the very start: nothing was handed over.
        let pending = if self.at_start { self.carry.len() as u64 } else { pending };
        let point = SplitPoint { next_number: self.next_number, after_cr: self.after_cr && pending == 0 };
        (fed.saturating_sub(pending), point)
    }

    /// The first bytes of the line not ended yet, if any (at most a few hundred).
    pub(crate) fn pending(&self) -> Option<&[u8]> {
        (!self.carry.is_empty() && !self.at_start).then(|| &self.carry[..self.carry.len().min(HEAD_BYTES)])
    }

    /// Feeds the next block of the file, calling `emit` for every line it completes.
    pub fn feed(&mut self, block: &[u8], emit: &mut impl FnMut(Line<'_>)) {
        if !self.at_start {
            return self.feed_body(block, emit);
        }
        // The first bytes decide whether the file starts with a BOM.
        self.carry.extend_from_slice(block);
        if self.carry.len() < BOM.len() && BOM.starts_with(&self.carry) {
            return;
        }
        self.at_start = false;
        let first = std::mem::take(&mut self.carry);
        self.feed_body(first.strip_prefix(BOM).unwrap_or(&first), emit);
    }

    fn feed_body(&mut self, block: &[u8], emit: &mut impl FnMut(Line<'_>)) {
        let mut start = 0;
        for end in memchr::memchr2_iter(b'\n', b'\r', block) {
            // The LF of a CRLF: the CR ended the line already.
            if std::mem::replace(&mut self.after_cr, block[end] == b'\r')
                && end == start
                && block[end] == b'\n'
            {
                start = end + 1;
                continue;
            }
            let piece = &block[start..end];
            start = end + 1;
            let number = self.next_number;
            self.next_number += 1;
            if self.overflow > 0 {
                self.overflow_more(piece);
                self.emit_overflow(number, emit);
                continue;
            }
            if let Some(spill) = self.spill.take() {
                self.emit_spilled(number, spill, piece, emit);
                continue;
            }
            if self.carry.is_empty() {
                self.emit_whole(number, piece, emit);
            } else {
                let mut joined = std::mem::take(&mut self.carry);
                // Exactly what the line needs: a doubling of a long line's buffer could hold
                // twice the limit.
                joined.reserve_exact(piece.len());
                joined.extend_from_slice(piece);
                self.emit_whole(number, &joined, emit);
                joined.clear();
                self.carry = joined;
            }
        }
        let rest = &block[start..];
        if !rest.is_empty() {
            self.after_cr = false;
        }
        if self.overflow > 0 {
            self.overflow_more(rest);
        } else if let Some(spill) = &mut self.spill {
            if spill.len + rest.len() as u64 > self.max_line_bytes as u64 {
                // Past the limit: what was written aside goes, and only the count goes on.
                self.overflow = spill.len;
                self.spill = None;
                self.overflow_more(rest);
            } else if spill.push(rest).is_ok() {
                // The line's first bytes stay in memory, for the report of a line too long.
                keep_head(&mut self.carry, rest);
            } else {
                // A spill that cannot be written is taken back into memory, if it can be.
                let spill = self.spill.take().expect("spilling");
                self.carry = spill.read_back(rest).unwrap_or_default();
            }
        } else if self.carry.len() + rest.len() > self.max_line_bytes {
            // From here on only the count and the head are kept (`rest` is not empty, so the
            // count is not 0 after it).
            self.overflow = self.carry.len() as u64;
            self.keep_only_head();
            self.overflow_more(rest);
        } else if self.carry.len() + rest.len() > self.hold_bytes {
            match Spill::of(&[&self.carry[..], rest].concat()) {
                Some(spill) => {
                    self.spill = Some(spill);
                    self.keep_only_head();
                    keep_head(&mut self.carry, rest);
                }
                None => self.hold(rest),
            }
        } else {
            self.hold(rest);
        }
    }

    /// Hands over the line written aside, ended by `piece`: read back whole when within the
    /// limit, else reported as over-long from its first bytes.
    fn emit_spilled(&mut self, number: u64, spill: Spill, piece: &[u8], emit: &mut impl FnMut(Line<'_>)) {
        let length = spill.len + piece.len() as u64;
        if length > self.max_line_bytes as u64 {
            let mut head = std::mem::take(&mut self.carry);
            keep_head(&mut head, piece);
            emit(Line::TooLong { number, length, head: &head });
            return;
        }
        self.carry.clear();
        match spill.read_back(piece) {
            Ok(line) => self.emit_whole(number, &line, emit),
            // What was written aside cannot be read back: the line is lost, and said to be.
            Err(_) => emit(Line::TooLong { number, length, head: &[] }),
        }
    }

    /// Adds `bytes` to the line being held: its buffer grows by doubling, but never past the
    /// limit (a doubling would hold up to twice the limit).
    fn hold(&mut self, bytes: &[u8]) {
        let needed = self.carry.len() + bytes.len();
        if needed > self.carry.capacity() {
            let grown = (self.carry.capacity() * 2).clamp(needed, self.max_line_bytes.max(needed));
            self.carry.reserve_exact(grown - self.carry.len());
        }
        self.carry.extend_from_slice(bytes);
    }

    /// Counts more bytes of an over-long line, keeping its first ones for the report.
    fn overflow_more(&mut self, bytes: &[u8]) {
        keep_head(&mut self.carry, bytes);
        self.overflow += bytes.len() as u64;
    }

    /// Lets go of the line held (not only forgets it), but for its first bytes.
    fn keep_only_head(&mut self) {
        self.carry.truncate(HEAD_BYTES);
        self.carry.shrink_to(HEAD_BYTES);
    }

    /// Reports the over-long line whose bytes were counted.
    fn emit_overflow(&mut self, number: u64, emit: &mut impl FnMut(Line<'_>)) {
        let length = self.overflow;
        let mut head = std::mem::take(&mut self.carry);
        head.truncate(length.min(HEAD_BYTES as u64) as usize);
        self.overflow = 0;
        emit(Line::TooLong { number, length, head: &head });
    }

    fn emit_whole(&self, number: u64, piece: &[u8], emit: &mut impl FnMut(Line<'_>)) {
        let bytes = without_padding(piece);
        if bytes.len() > self.max_line_bytes {
            emit(Line::TooLong {
                number,
                length: bytes.len() as u64,
                head: &bytes[..HEAD_BYTES.min(bytes.len())],
            });
        } else if !is_blank(bytes) {
            emit(Line::Whole { number, bytes });
        }
    }

    /// Ends the file: hands over the unterminated tail, if any.
    pub fn finish(&mut self, emit: &mut impl FnMut(Line<'_>)) {
        let number = self.next_number;
        if self.overflow > 0 {
            self.emit_overflow(number, emit);
        } else if let Some(spill) = self.spill.take() {
            match spill.read_back(&[]) {
                Ok(tail) => {
                    let bytes = without_padding(&tail);
                    match bytes.len() > self.max_line_bytes {
                        true => emit(Line::TooLong {
                            number,
                            length: bytes.len() as u64,
                            head: &bytes[..HEAD_BYTES.min(bytes.len())],
                        }),
                        false => emit(Line::Unterminated { number, bytes }),
                    }
                }
                Err(_) => emit(Line::TooLong { number, length: 0, head: &[] }),
            }
        } else if !is_blank(&self.carry) {
            let tail = std::mem::take(&mut self.carry);
            let bytes = without_padding(&tail);
            if bytes.len() > self.max_line_bytes {
                let head = &bytes[..HEAD_BYTES.min(bytes.len())];
                emit(Line::TooLong { number, length: bytes.len() as u64, head });
            } else if !(self.at_start && BOM.starts_with(bytes)) {
                emit(Line::Unterminated { number, bytes });
            }
        }
        self.carry.clear();
        self.spill = None;
        self.overflow = 0;
        self.after_cr = false;
        self.next_number = 1;
        self.at_start = true;
    }
}

/// Adds to `head` (a line's first bytes) what it has room for of `bytes`, up to [`HEAD_BYTES`].
fn keep_head(head: &mut Vec<u8>, bytes: &[u8]) {
    let room = HEAD_BYTES.saturating_sub(head.len());
    head.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

/// A line without the NUL bytes before it (what a file system leaves of a write lost in a crash,
/// before the next writer's line); a line of NULs alone is kept as it is, to be reported.
fn without_padding(line: &[u8]) -> &[u8] {
    match line.iter().position(|b| *b != 0) {
        Some(at) => &line[at..],
        None => line,
    }
}

fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| b.is_ascii_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(blocks: &[&[u8]], max: usize) -> Vec<String> {
        let held = split_holding(blocks, max, HOLD_BYTES);
        // The same lines when every line of more than 3 bytes is written aside.
        assert_eq!(split_holding(blocks, max, 3), held, "spilled at 3 bytes");
        held
    }

    fn split_holding(blocks: &[&[u8]], max: usize, hold: usize) -> Vec<String> {
        let mut splitter = LineSplitter::holding(max, hold);
        let mut out = Vec::new();
        let mut emit = |line: Line<'_>| {
            out.push(match line {
                Line::Whole { number, bytes } => {
                    format!("{number}:{}", String::from_utf8_lossy(bytes))
                }
                Line::Unterminated { number, bytes } => {
                    format!("{number}~{}", String::from_utf8_lossy(bytes))
                }
                Line::TooLong { number, length, head } => {
                    format!("{number}!{length}:{}", String::from_utf8_lossy(head))
                }
            })
        };
        for block in blocks {
            splitter.feed(block, &mut emit);
        }
        splitter.finish(&mut emit);
        out
    }

    #[test]
    fn numbers_lines_and_skips_blank_ones() {
        assert_eq!(split(&[b"a\n\nb\n  \nc\n"], 100), ["1:a", "3:b", "5:c"]);
    }

    #[test]
    fn crlf_reads_as_lf() {
        assert_eq!(split(&[b"a\r\nb\r\n"], 100), ["1:a", "2:b"]);
    }

    #[test]
    fn a_cr_alone_ends_a_line_and_crlf_is_one_end_however_it_is_cut() {
        assert_eq!(split(&[b"a\rb\rc"], 100), ["1:a", "2:b", "3~c"]);
        assert_eq!(split(&[b"a\r\rb\r\n"], 100), ["1:a", "3:b"]);
        let bytes = b"a\r\nb\rc\n\rd\r\n";
        for cut in 0..=bytes.len() {
            assert_eq!(
                split(&[&bytes[..cut], &bytes[cut..]], 100),
                ["1:a", "2:b", "3:c", "5:d"],
                "cut {cut}"
            );
        }
    }

    #[test]
    fn nul_padding_before_a_line_is_dropped_and_a_line_of_nuls_kept() {
        assert_eq!(split(&[b"a\n\0\0\0b\n\0\0\n\0c"], 100), ["1:a", "2:b", "3:\0\0", "4~c"]);
    }

    #[test]
    fn lines_span_blocks() {
        assert_eq!(split(&[b"ab", b"c\nd", b"e\n"], 100), ["1:abc", "2:de"]);
        assert_eq!(split(&[b"ab\r", b"\ncd\n"], 100), ["1:ab", "2:cd"]);
    }

    #[test]
    fn unterminated_tail_is_told_apart() {
        assert_eq!(split(&[b"a\n{\"ty"], 100), ["1:a", "2~{\"ty"]);
        assert_eq!(split(&[b"a\n"], 100), ["1:a"]);
    }

    #[test]
    fn bom_is_dropped_even_split_across_blocks() {
        assert_eq!(split(&[b"\xEF\xBB\xBFa\n"], 100), ["1:a"]);
        assert_eq!(split(&[b"\xEF", b"\xBB", b"\xBFa\nb"], 100), ["1:a", "2~b"]);
        assert_eq!(split(&[b"\xEF\xBB\xBF"], 100), Vec::<String>::new());
    }

    #[test]
    fn over_long_lines_are_reported_not_held() {
        assert_eq!(split(&[b"short\n0123456789abc\nok\n"], 8), ["1:short", "2!13:0123456789abc", "3:ok"]);
        assert_eq!(split(&[b"0123", b"456789", b"ab\nok\n"], 8), ["1!12:0123456789ab", "2:ok"]);
        assert_eq!(split(&[b"0123456789"], 8), ["1!10:0123456789"]);
    }

    #[test]
    fn an_over_long_line_starting_a_block_is_not_held() {
        // Regression (found by fuzzing): a line longer than the limit that began a block was
        // held whole, and read as blank when it was.
        let mut splitter = LineSplitter::new(8);
        splitter.feed(&[b'x'; 1000], &mut |_| {});
        assert!(splitter.carry.len() <= HEAD_BYTES, "held {} bytes", splitter.carry.len());
        assert_eq!(split(&[b"  "], 0), ["1!2:  "]);
        assert_eq!(split(&[b" ", b" "], 0), ["1!2:  "]);
    }

    /// A line over the limit cost about four times the limit: the held buffer doubled past it,
    /// and kept its size once the line was known to be too long.
    #[test]
    fn a_long_line_is_held_in_no_more_than_the_limit_and_let_go_past_it() {
        let limit = 1 << 20;
        let mut splitter = LineSplitter::holding(limit, usize::MAX);
        let block = vec![b'x'; 48 << 10];
        let mut largest = 0;
        for _ in 0..64 {
            splitter.feed(&block, &mut |_| {});
            largest = largest.max(splitter.carry.capacity());
        }
        assert!(largest <= limit, "held {largest} bytes for a limit of {limit}");
        assert!(splitter.carry.capacity() <= 2 * HEAD_BYTES, "kept {} bytes", splitter.carry.capacity());
        let mut lines = Vec::new();
        splitter.feed(b"\n{}\n", &mut |line| lines.push(format!("{line:?}").len()));
        assert_eq!(lines.len(), 2);
    }

    /// A line over the limit is written aside as it comes, not held: memory holds its first
    /// bytes and a block, and a long line within the limit comes back whole and exact.
    #[test]
    fn a_long_line_is_written_aside_and_read_back_or_dropped_past_the_limit() {
        let limit = 1 << 20;
        let hold = 64 << 10;
        for (length, over) in [(900_000usize, false), (3 << 20, true)] {
            let text: Vec<u8> = (0..length).map(|i| b'a' + (i % 26) as u8).collect();
            let mut splitter = LineSplitter::holding(limit, hold);
            let mut largest = 0;
            let mut got = Vec::new();
            for block in [&b"{}\n"[..], &text].concat().chunks(48 << 10).chain([&b"\nok\n"[..]]) {
                splitter.feed(block, &mut |line| got.push(format!("{line:?}")));
                largest = largest.max(splitter.carry.capacity());
            }
            splitter.finish(&mut |line| got.push(format!("{line:?}")));
            assert!(largest <= hold + (48 << 10), "held {largest} bytes of a line of {length}");
            assert_eq!(got.len(), 3, "{length}");
            let second = match over {
                true => format!(
                    "{:?}",
                    Line::TooLong { number: 2, length: length as u64, head: &text[..HEAD_BYTES] }
                ),
                false => format!("{:?}", Line::Whole { number: 2, bytes: &text }),
            };
            assert!(got[1] == second, "{length}");
            assert_eq!(got[2], format!("{:?}", Line::Whole { number: 3, bytes: b"ok" }));
        }
        // A file ending in a long line with no end: handed over whole, as its tail.
        let text = vec![b'x'; 200_000];
        let mut splitter = LineSplitter::holding(limit, hold);
        let mut got = Vec::new();
        for block in text.chunks(48 << 10) {
            splitter.feed(block, &mut |line| got.push(format!("{line:?}")));
        }
        assert_eq!(splitter.stopped_at(text.len() as u64).0, 0, "nothing handed over yet");
        splitter.finish(&mut |line| got.push(format!("{line:?}")));
        assert_eq!(got, [format!("{:?}", Line::Unterminated { number: 1, bytes: &text })]);
    }

    #[test]
    fn the_cr_of_a_crlf_ending_never_counts_against_the_limit() {
        for blocks in [
            &[&b"01234567\r\nab\r\n"[..]][..],
            &[b"01234567\r", b"\nab\r\n"],
            &[b"0123", b"4567\r\n", b"ab\r\n"],
        ] {
            assert_eq!(split(blocks, 8), ["1:01234567", "2:ab"], "{blocks:?}");
        }
        for blocks in [&[&b"012345678\r\n"[..]][..], &[b"012345678\r", b"\n"], &[b"0123456", b"78\r", b"\n"]]
        {
            assert_eq!(split(blocks, 8), ["1!9:012345678"], "{blocks:?}");
        }
    }

    #[test]
    fn a_read_resumed_where_the_last_whole_line_ended_numbers_and_cuts_lines_as_one_read() {
        // The follow of a file being written: each cut of the bytes, read up to the cut (the line
        // not ended yet left for later), then on from where the whole lines ended.
        let text: &[u8] = b"\xEF\xBB\xBFa\r\nbb\r\rccc\n\n0123456789xyz\nd\re";
        let whole = split(&[text], 8);
        for (cut, hold) in (0..=text.len()).flat_map(|cut| [(cut, HOLD_BYTES), (cut, 2)]) {
            let mut lines = Vec::new();
            let mut emit = |line: Line<'_>| {
                lines.push(match line {
                    Line::Whole { number, bytes } => format!("{number}:{}", String::from_utf8_lossy(bytes)),
                    Line::Unterminated { number, bytes } => {
                        format!("{number}~{}", String::from_utf8_lossy(bytes))
                    }
                    Line::TooLong { number, length, head } => {
                        format!("{number}!{length}:{}", String::from_utf8_lossy(head))
                    }
                })
            };
            {
                let mut first = LineSplitter::holding(8, hold);
                first.feed(&text[..cut], &mut emit);
                let (offset, point) = first.stopped_at(cut as u64);
                assert!(offset <= cut as u64);
                let mut then = LineSplitter::resuming(8, point);
                then.hold_bytes = hold;
                then.feed(&text[offset as usize..], &mut emit);
                then.finish(&mut emit);
                assert_eq!(lines, whole, "cut at {cut}, held {hold}");
            }
        }
    }
}
