//! Any bytes read as a transcript of every format, in process and without DataFusion: the line
//! splitter fed in blocks of a chosen size, the inference pass, and each table's line reader and
//! row decoder. Shared by the property tests (tests/robustness.rs) and the fuzz targets (fuzz/).

use object_store::memory::InMemory;
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt};
use std::path::PathBuf;
use std::sync::Arc;
use txq::format::Format;
use txq::infer::pass::infer_file;
use txq::infer::signature::SignatureTable;
use txq::infer::stats::FormatStats;
use txq::scan::decode::RowDecoder;
use txq::scan::{LineReader, ScanSource};
use txq::source::files::SourceFile;
use txq::source::lines::{Line, LineSplitter};
use txq::table::corpus::{FormatData, ProblemLog};
use txq::table::event_table::all_tables;

/// Where each format finds its file (rupu by extension, reeval by name).
fn place(format: &Format) -> &'static str {
    match (format.name, format.lines_table.is_some()) {
        ("rupu", _) => "/fuzz/run_1.jsonl",
        (_, false) => "/fuzz/R/e/c/1/transcript.jsonl",
        (_, true) => "/fuzz/R/e/c/1/transcript.raw.jsonl",
    }
}

/// One table read from the bytes.
pub struct TableRead {
    pub format: &'static str,
    pub table: String,
    pub batch: datafusion::arrow::record_batch::RecordBatch,
}

/// Reads `bytes` as a file of every format, feeding the splitter `block` bytes at a time, and
/// decodes every column of every table the inference pass finds. Panics if a batch cannot be
/// built (the query would fail).
pub fn read_as_every_format(bytes: &[u8], block: usize, max_line_bytes: usize) -> Vec<TableRead> {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let mut out = Vec::new();
    for format in txq::format::all() {
        let path = PathBuf::from(place(&format));
        let location = StorePath::from_absolute_path(&path).expect("a store path");
        futures::executor::block_on(store.put(&location, bytes.to_vec().into())).expect("stored");
        let file = Arc::new(SourceFile::new(path.clone(), path, bytes.len() as u64, None, None, None));
        let file_stats =
            futures::executor::block_on(infer_file(store.clone(), &format, &file, max_line_bytes, 0, None));
        assert!(file_stats.unreadable.is_none(), "{:?}", file_stats.unreadable);
        let mut stats = FormatStats::default();
        stats.add(&file_stats);
        // Every table is read, transcript or not: any bytes must decode.
        let tables: Vec<_> = all_tables(&format, &stats).into_iter().map(Arc::new).collect();
        let name = format.name;
        let mut shapes = SignatureTable::default();
        let summary = shapes.summarize(&file_stats);
        let data = Arc::new(FormatData::new(
            format,
            txq::source::files::SourceFiles::of([(*file).clone()]),
            &[&summary],
            &shapes,
            vec![],
            tables.clone(),
            stats.clone(),
        ));
        for table in tables {
            let source = Arc::new(ScanSource {
                data: data.clone(),
                table: table.clone(),
                store: store.clone(),
                max_line_bytes,
                problems: Arc::new(ProblemLog::default()),
            });
            let mut reader = LineReader::new(source);
            let mut decoder = RowDecoder::new(&table, None);
            reader.start_file(&file, &mut decoder);
            let mut splitter = LineSplitter::new(max_line_bytes);
            for chunk in bytes.chunks(block.max(1)) {
                splitter.feed(chunk, &mut |line| reader.line(line, &mut decoder));
            }
            splitter.finish(&mut |line| reader.line(line, &mut decoder));
            let batch = decoder
                .finish()
                .unwrap_or_else(|e| panic!("{name}.{}: the batch cannot be built: {e}", table.name));
            out.push(TableRead { format: name, table: table.name.clone(), batch });
        }
    }
    out
}

/// The lines the splitter hands over for `bytes` fed `block` bytes at a time, as text.
pub fn split(bytes: &[u8], block: usize, max_line_bytes: usize) -> Vec<String> {
    let mut splitter = LineSplitter::new(max_line_bytes);
    let mut out = Vec::new();
    let mut emit = |line: Line<'_>| {
        out.push(match line {
            Line::Whole { number, bytes } => format!("{number} whole {:?}", String::from_utf8_lossy(bytes)),
            Line::Unterminated { number, bytes } => {
                format!("{number} tail {:?}", String::from_utf8_lossy(bytes))
            }
            Line::TooLong { number, length, head } => {
                format!("{number} too long {length} {:?}", String::from_utf8_lossy(head))
            }
        })
    };
    for chunk in bytes.chunks(block.max(1)) {
        splitter.feed(chunk, &mut emit);
    }
    splitter.finish(&mut emit);
    out
}

/// Checks what holds for any bytes: no panic, every batch built, the splitter's lines the same
/// however the bytes are cut into blocks, every row's line number within the file.
pub fn check(bytes: &[u8], block: usize, max_line_bytes: usize) {
    let whole = split(bytes, bytes.len().max(1), max_line_bytes);
    let cut = split(bytes, block, max_line_bytes);
    assert_eq!(whole, cut, "the lines depend on the blocks ({block} bytes, limit {max_line_bytes})");
    let lines = whole.len();
    // A LF, a CR alone or a CRLF ends a line.
    let ends = bytes
        .iter()
        .enumerate()
        .filter(|&(i, b)| *b == b'\r' || (*b == b'\n' && (i == 0 || bytes[i - 1] != b'\r')));
    let last_number = ends.count() as i64 + 1;
    for table in read_as_every_format(bytes, block, max_line_bytes) {
        let Some(column) = table.batch.column_by_name("line") else { continue };
        let numbers =
            column.as_any().downcast_ref::<datafusion::arrow::array::Int64Array>().expect("line is bigint");
        for n in numbers.iter().flatten() {
            assert!((1..=last_number).contains(&n), "{}.{}: line {n}", table.format, table.table);
        }
        if table.table == "events" || table.table == "raw" {
            assert!(table.batch.num_rows() <= lines, "more {} rows than lines", table.table);
        }
    }
}
