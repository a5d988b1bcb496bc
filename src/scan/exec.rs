//! The scan's execution plan: the files split into partitions by size, each partition a task that
//! reads its files block by block and sends batches as they fill, yielding to the other tasks
//! between blocks; what it read and met counted in the plan's metrics (`EXPLAIN ANALYZE`, the
//! shell's progress line) and its problems kept in the node, for the statement's warning.

use super::ScanSource;
use super::line_reader::LineReader;
use crate::scan::decode::{LineValues, RowDecoder};
use crate::source::files::{SourceFile, SourceFiles};
use crate::source::lines::LineSplitter;
use crate::source::read::BlockReader;
use crate::table::corpus::Problem;
use crate::table::event_table::{ColumnSource, EventTable, Rows};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{ColumnStatistics, Statistics};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{
    Count, ExecutionPlanMetricsSet, MetricBuilder, MetricType, MetricsSet,
};
use datafusion::physical_plan::statistics::StatisticsArgs;
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;
use datafusion::physical_plan::{
    ChildrenPropertiesMode, DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    ReplaceChildrenOptions,
};
use std::fmt;
use std::sync::Arc;
use tokio::sync::mpsc::Sender;

/// What a query asks of a scan.
#[derive(Debug, Clone)]
pub(crate) struct ScanConfig {
    pub(crate) projection: Option<Vec<usize>>,
    /// Rows enough for the query, when it says so.
    pub(crate) limit: Option<usize>,
    pub(crate) batch_size: usize,
    /// For a followed statement, where the last run's scans stopped in each file: only what
    /// lies after is read, whole lines only ([`super::follow`]).
    pub(crate) follow: Option<Arc<super::follow::FollowPositions>>,
}

/// Reads one table's rows from the files of its format.
#[derive(Debug)]
pub(crate) struct ScanExec {
    pub(super) source: Arc<ScanSource>,
    pub(super) config: ScanConfig,
    /// Each partition's files, by their index among the format's transcripts (a million files
    /// are four bytes each here; each becomes a [`SourceFile`] when it is read).
    pub(super) partitions: Vec<Vec<u32>>,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
    /// Each partition's rows, known without reading while its files are as the corpus found
    /// them and hold no damaged line (whose warning a read gives); found when first asked (it
    /// looks at every file).
    exact_rows: std::sync::OnceLock<Option<Vec<u64>>>,
    /// Damaged files that hold none of the table's rows, so are not read: their skipped lines
    /// are counted (by partition 0) all the same, since a damaged line may have been a row.
    pub(super) damaged_elsewhere: Vec<u32>,
    /// For a scan a cluster runs: a child of one partition per partition of the scan, each one
    /// row holding that partition's number ([`ScanExec::split_by_child`]). `global` numbers the
    /// scan's partitions (0.. until a task's plan keeps some of them).
    pub(super) split: Option<Arc<dyn ExecutionPlan>>,
    pub(super) global: Vec<usize>,
}

/// The name of the column of a split scan's child ([`ScanExec::split_by_child`]).
const PARTITION_COLUMN: &str = "txq_scan_partition";

/// The names of the scan's metrics.
pub(crate) mod metric {
    pub(crate) const FILES_READ: &str = "files_read";
    pub(crate) const BYTES_READ: &str = "bytes_read";
    pub(crate) const DAMAGED_LINES: &str = "damaged_lines";
    pub(crate) const NULLED_VALUES: &str = "nulled_values";
}

/// The counters of one partition of a scan.
#[derive(Debug, Clone)]
pub(super) struct ScanCounters {
    pub(crate) output_rows: Count,
    pub(crate) files_read: Count,
    pub(crate) bytes_read: Count,
    pub(crate) damaged_lines: Count,
    pub(crate) nulled_values: Count,
}

impl ScanCounters {
    fn new(metrics: &ExecutionPlanMetricsSet, partition: usize) -> Self {
        let counter = |name: &'static str| {
            MetricBuilder::new(metrics).with_type(MetricType::Summary).counter(name, partition)
        };
        Self {
            output_rows: MetricBuilder::new(metrics).with_type(MetricType::Summary).output_rows(partition),
            files_read: counter(metric::FILES_READ),
            bytes_read: counter(metric::BYTES_READ),
            damaged_lines: counter(metric::DAMAGED_LINES),
            nulled_values: counter(metric::NULLED_VALUES),
        }
    }
}

/// How far the scans of a running plan have got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ScanProgress {
    pub(crate) files: u64,
    pub(crate) bytes: u64,
    pub(crate) rows: u64,
}

/// Every scan in `plan` (a plan being run or run), its children first.
fn scans_of<'a>(plan: &'a Arc<dyn ExecutionPlan>, out: &mut Vec<&'a ScanExec>) {
    for child in plan.children() {
        scans_of(child, out);
    }
    if let Some(scan) = plan.downcast_ref::<ScanExec>() {
        out.push(scan);
    }
}

/// What the scans of `plan` have read so far, from their metrics.
pub(crate) fn progress_of(plan: &Arc<dyn ExecutionPlan>) -> ScanProgress {
    let mut scans = Vec::new();
    scans_of(plan, &mut scans);
    let mut progress = ScanProgress::default();
    for scan in scans {
        let metrics = scan.metrics.clone_inner();
        let sum = |name: &str| metrics.sum_by_name(name).map_or(0, |v| v.as_usize() as u64);
        progress.files += sum(metric::FILES_READ);
        progress.bytes += sum(metric::BYTES_READ);
        progress.rows += metrics.output_rows().unwrap_or(0) as u64;
    }
    progress
}

/// The problems the scans of `plan` met, each once however many scans met it.
pub(crate) fn problems_of(plan: &Arc<dyn ExecutionPlan>) -> Vec<Problem> {
    let mut scans = Vec::new();
    scans_of(plan, &mut scans);
    let mut problems: Vec<Problem> = scans.iter().flat_map(|scan| scan.problems()).collect();
    problems.sort();
    problems.dedup();
    problems
}

impl ScanExec {
    /// A scan of `files` (the indexes of the format's transcripts that the query's per-file
    /// filters keep, in order).
    pub(crate) fn new(
        source: Arc<ScanSource>,
        files: Vec<u32>,
        config: ScanConfig,
        target_partitions: usize,
    ) -> Self {
        let partitions = split_by_size(&source.data.files, files, target_partitions);
        Self::of_partitions(source, partitions, config)
    }

    /// A scan of files already dealt into partitions (as a cluster's scheduler dealt them).
    pub(crate) fn of_partitions(
        source: Arc<ScanSource>,
        partitions: Vec<Vec<u32>>,
        config: ScanConfig,
    ) -> Self {
        let schema = RowDecoder::new(&source.table, config.projection.as_deref()).schema().clone();
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions.len()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        Self {
            source,
            config,
            global: (0..partitions.len()).collect(),
            partitions,
            schema,
            properties: Arc::new(properties),
            metrics: ExecutionPlanMetricsSet::new(),
            exact_rows: std::sync::OnceLock::new(),
            damaged_elsewhere: Vec::new(),
            split: None,
        }
    }

    /// The scan, with a child that says which of its partitions a task runs. A Ballista
    /// scheduler keeps, in the plan of each task, the partitions of the leaves it knows (a
    /// memory source among them) and leaves a leaf of its own alone: each task would read the
    /// first partitions again. The memory source below the scan is cut to the task's
    /// partitions, and the scan, given it as its new child, keeps the same ones.
    pub(crate) fn split_by_child(mut self) -> Result<Self> {
        use datafusion::arrow::array::UInt64Array;
        use datafusion::arrow::datatypes::{DataType, Field, Schema};
        let schema = Arc::new(Schema::new(vec![Field::new(PARTITION_COLUMN, DataType::UInt64, false)]));
        let tokens: Vec<Vec<RecordBatch>> = self
            .global
            .iter()
            .map(|&p| {
                let column = Arc::new(UInt64Array::from(vec![p as u64]));
                RecordBatch::try_new(schema.clone(), vec![column]).map(|batch| vec![batch])
            })
            .collect::<std::result::Result<_, _>>()?;
        let child = datafusion::datasource::memory::MemorySourceConfig::try_new_exec(&tokens, schema, None)?;
        self.split = Some(child);
        Ok(self)
    }

    /// The partition numbers a split scan's child holds ([`ScanExec::split_by_child`]).
    fn numbers_of(child: &Arc<dyn ExecutionPlan>) -> Result<Vec<usize>> {
        use datafusion::arrow::array::{Array, UInt64Array};
        use datafusion::datasource::memory::MemorySourceConfig;
        use datafusion::datasource::source::DataSourceExec;
        let memory = child
            .downcast_ref::<DataSourceExec>()
            .and_then(|exec| exec.data_source().as_ref().downcast_ref::<MemorySourceConfig>())
            .ok_or_else(|| {
                DataFusionError::Internal(format!(
                    "TranscriptScan: the child that numbers its partitions is now {}",
                    child.name()
                ))
            })?;
        let mut numbers = Vec::new();
        for batch in memory.partitions().iter().flatten() {
            let column =
                batch.column_by_name(PARTITION_COLUMN).and_then(|c| c.as_any().downcast_ref::<UInt64Array>());
            let column = column
                .ok_or_else(|| DataFusionError::Internal("TranscriptScan: no partition numbers".into()))?;
            numbers.extend((0..column.len()).map(|i| column.value(i) as usize));
        }
        Ok(numbers)
    }

    /// The scan of only the partitions `numbers` (of [`ScanExec::global`]), split by `child`.
    fn kept(&self, numbers: Vec<usize>, child: Arc<dyn ExecutionPlan>) -> Result<Self> {
        let partitions = numbers
            .iter()
            .map(|n| {
                let at = self.global.iter().position(|g| g == n).ok_or_else(|| {
                    DataFusionError::Internal(format!("TranscriptScan has no partition {n} to keep"))
                })?;
                Ok(self.partitions[at].clone())
            })
            .collect::<Result<Vec<_>>>()?;
        let mut scan = ScanExec::of_partitions(self.source.clone(), partitions, self.config.clone())
            .with_damaged_elsewhere(match numbers.contains(&0) {
                // Partition 0 counts what the damaged files elsewhere skipped.
                true => self.damaged_elsewhere.clone(),
                false => Vec::new(),
            });
        scan.global = numbers;
        scan.split = Some(child);
        Ok(scan)
    }

    /// The scan, counting the damage of `files` too (damaged files of the format that hold none
    /// of its rows).
    pub(crate) fn with_damaged_elsewhere(mut self, files: Vec<u32>) -> Self {
        self.damaged_elsewhere = files;
        self
    }

    /// The problems this scan has met so far.
    pub(crate) fn problems(&self) -> Vec<Problem> {
        self.source.problems.problems()
    }
}

/// Each partition's rows, when the events by type of the corpus say them: every file unchanged
/// and undamaged, and the table one of whole events (all, or of one type).
fn exact_rows(source: &ScanSource, partitions: &[Vec<u32>]) -> Option<Vec<u64>> {
    let wanted: Option<&str> = match &source.table.rows {
        Rows::AllEvents => None,
        Rows::Type(t) => Some(t.as_str()),
        Rows::Lines | Rows::Errors => return None,
    };
    let data = &source.data;
    let files = || partitions.iter().flatten().map(|&i| i as usize);
    // What needs no system call first.
    if files().any(|i| data.file_damage.of_file(i) > 0) || files().any(|i| i >= data.file_events.files()) {
        return None;
    }
    let mut rows = Vec::with_capacity(partitions.len());
    for files in partitions {
        rows.push(files.iter().map(|&i| data.file_events.events_of(i as usize, wanted)).sum());
    }
    files().all(|i| data.files.get(i).unchanged()).then_some(rows)
}

/// Deals `files` (indexes of `all`) into at most `n` partitions of about equal bytes (largest
/// first, each to the lightest partition), each in the order of the files; at least one
/// partition, maybe empty.
fn split_by_size(all: &SourceFiles, mut files: Vec<u32>, n: usize) -> Vec<Vec<u32>> {
    let n = n.clamp(1, files.len().max(1));
    let size = |i: u32| all.size(i as usize);
    files.sort_by(|&a, &b| size(b).cmp(&size(a)).then(a.cmp(&b)));
    let mut parts: Vec<(u64, Vec<u32>)> = vec![(0, Vec::new()); n];
    for i in files {
        let lightest = parts.iter_mut().min_by_key(|(bytes, _)| *bytes).expect("n >= 1");
        lightest.0 += size(i);
        lightest.1.push(i);
    }
    parts
        .into_iter()
        .map(|(_, mut files)| {
            files.sort_unstable();
            files
        })
        .collect()
}

impl DisplayAs for ScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let files: usize = self.partitions.iter().map(Vec::len).sum();
        write!(
            f,
            "TranscriptScan: {}.{}, files={files}",
            self.source.data.format.name, self.source.table.name
        )?;
        if let Some(projection) = &self.config.projection {
            let names: Vec<&str> = self.schema.fields().iter().map(|f| f.name().as_str()).collect();
            write!(f, ", projection=[{}]", names.join(", "))?;
            let _ = projection;
        }
        if let Some(limit) = self.config.limit {
            write!(f, ", limit={limit}")?;
        }
        if rows_from_counts(&self.source.table, self.config.projection.as_deref()) {
            write!(f, ", rows from event counts")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for ScanExec {
    fn name(&self) -> &str {
        "TranscriptScan"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        self.split.iter().collect()
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        self.split.iter().map(|_| false).collect()
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    /// A split scan given a new child keeps the partitions its child numbers.
    fn replace_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match (children.into_iter().next(), &self.split) {
            (Some(child), Some(split)) if !Arc::ptr_eq(&child, split) => {
                let numbers = Self::numbers_of(&child)?;
                Ok(Arc::new(self.kept(numbers, child)?))
            }
            _ => Ok(self),
        }
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(children, ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute))
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let files = self.partitions.get(partition).cloned().ok_or_else(|| {
            DataFusionError::Internal(format!("TranscriptScan has no partition {partition}"))
        })?;
        let mut builder = RecordBatchReceiverStreamBuilder::new(self.schema.clone(), 2);
        let tx = builder.tx();
        let (source, config) = (self.source.clone(), self.config.clone());
        let counters = ScanCounters::new(&self.metrics, partition);
        if partition == 0 {
            for &i in &self.damaged_elsewhere {
                let file = self.source.data.files.get(i as usize);
                skipped(&self.source, &self.config, i as usize, &file, &counters);
            }
        }
        // Objects are read through the stores of the task's runtime: on a cluster, the
        // executor's own, made from its environment.
        let stores = context.runtime_env();
        builder.spawn(async move { scan_files(source, config, &stores, files, tx, counters).await });
        Ok(builder.build())
    }

    /// The counters, and one more for each problem met (named for it: [`super::problem_metric`]), so that
    /// the problems of a scan run on a cluster's executor reach the statement's warnings.
    fn metrics(&self) -> Option<MetricsSet> {
        let mut metrics = self.metrics.clone_inner();
        for problem in self.problems() {
            metrics.push(Arc::new(super::problem_metric::problem_metric(&problem)));
        }
        Some(metrics)
    }

    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        let exact_rows = self.exact_rows.get_or_init(|| {
            match self.damaged_elsewhere.is_empty() && self.config.follow.is_none() {
                true => exact_rows(&self.source, &self.partitions),
                false => None,
            }
        });
        let rows = exact_rows.as_ref().and_then(|rows| match args.partition() {
            None => Some(rows.iter().sum::<u64>()),
            Some(p) => rows.get(p).copied(),
        });
        let mut statistics = Statistics::new_unknown(&self.schema);
        if let Some(rows) = rows {
            let rows = self.config.limit.map_or(rows, |limit| rows.min(limit as u64));
            statistics.num_rows = Precision::Exact(rows as usize);
            statistics.column_statistics = vec![ColumnStatistics::new_unknown(); self.schema.fields().len()];
        }
        Ok(Arc::new(statistics))
    }
}

/// A batch holds the rows of at most this many bytes of lines: 8192 rows of large tool outputs
/// would be a batch of gigabytes, more than a sort held to `--memory-limit` may take in (rows
/// of the usual few hundred bytes reach `batch_size` first).
const BATCH_LINE_BYTES: u64 = 1 << 20;

/// Reads `files` in order, sending batches of at most `batch_size` rows and
/// [`BATCH_LINE_BYTES`] of their lines.
async fn scan_files(
    source: Arc<ScanSource>,
    config: ScanConfig,
    stores: &RuntimeEnv,
    files: Vec<u32>,
    tx: Sender<Result<RecordBatch>>,
    counters: ScanCounters,
) -> Result<()> {
    let mut decoder = RowDecoder::new(&source.table, config.projection.as_deref());
    let mut reader = LineReader::new(source.clone())
        .counting_nulls(counters.nulled_values.clone())
        .projecting(config.projection.as_deref());
    let tx = Counted { tx: &tx, rows: &counters.output_rows };
    let mut sent = 0usize;
    // Batches made while a block was read, with their rows, to send before the next block.
    let mut full: Vec<(usize, BatchResult)> = Vec::new();
    let batch_size = config.batch_size.max(1);
    let done = |sent: usize| config.limit.is_some_and(|limit| sent >= limit);
    let counted = rows_from_counts(&source.table, config.projection.as_deref()) && config.follow.is_none();
    for &index in &files {
        if done(sent) {
            break;
        }
        let index = index as usize;
        let file = &Arc::new(source.data.files.get(index));
        if let Some(follow) = &config.follow {
            let read = FollowedRead { source: &source, config: &config, stores, follow, counters: &counters };
            if !read.file((index, file), &mut reader, &mut decoder, tx, &mut sent, &mut full).await {
                return Ok(());
            }
            continue;
        }
        // A file changed since the corpus was opened is read instead: its lines say what is there.
        if counted && file.unchanged() {
            started(&source, &config, index, file, &counters);
            if !counted_rows(&source, (index, file), &mut reader, &mut decoder, batch_size, tx, &mut sent)
                .await
                || done(sent)
            {
                return Ok(());
            }
            continue;
        }
        let unreadable =
            |why: String| source.problems.record(Problem::UnreadableFile { file: file.path.clone(), why });
        let mut blocks =
            match store_of(stores, &source, file).and_then(|store| BlockReader::open(store, file)) {
                Ok(blocks) => blocks,
                Err(why) => {
                    unreadable(why.to_string());
                    continue;
                }
            };
        started(&source, &config, index, file, &counters);
        match rows_known(&source, index, file) {
            Some(rows) => reader.start_file_holding(file, &mut decoder, rows),
            None => reader.start_file(file, &mut decoder),
        }
        let mut splitter = LineSplitter::new(source.max_line_bytes);
        loop {
            let block = match blocks.next_block().await {
                Ok(Some(block)) => {
                    counters.bytes_read.add(block.len());
                    block
                }
                Ok(None) => break,
                Err(why) => {
                    unreadable(why.to_string());
                    break;
                }
            };
            splitter
                .feed(&block, &mut |line| read_line(line, &mut reader, &mut decoder, batch_size, &mut full));
            for (rows, batch) in full.drain(..) {
                sent += rows;
                if !send(tx, batch, batch_size).await || done(sent) {
                    return Ok(());
                }
            }
            // Parsing a block is work enough: let the other tasks of the runtime run.
            tokio::task::consume_budget().await;
        }
        splitter.finish(&mut |line| read_line(line, &mut reader, &mut decoder, batch_size, &mut full));
        if let Some(note) = blocks.read_note() {
            source.problems.record(Problem::ReadNote { file: file.path.clone(), note });
        }
    }
    for (_, batch) in full {
        if !send(tx, batch, batch_size).await {
            return Ok(());
        }
    }
    if decoder.rows() > 0 {
        send(tx, decoder.finish(), batch_size).await;
    }
    Ok(())
}

type BatchResult = Result<RecordBatch, datafusion::arrow::error::ArrowError>;

/// The read of one file by a scan of a followed statement.
struct FollowedRead<'a> {
    source: &'a Arc<ScanSource>,
    config: &'a ScanConfig,
    stores: &'a RuntimeEnv,
    follow: &'a super::follow::FollowPositions,
    counters: &'a ScanCounters,
}

impl FollowedRead<'_> {
    /// Reads the whole lines of `file` (transcript `index` of the format) after where the last
    /// run stopped, and notes where these end; false once the receiver is gone.
    async fn file(
        &self,
        (index, file): (usize, &Arc<SourceFile>),
        reader: &mut LineReader,
        decoder: &mut RowDecoder,
        tx: Counted<'_>,
        sent: &mut usize,
        full: &mut Vec<(usize, BatchResult)>,
    ) -> bool {
        use super::follow::{FollowPositions, Position};
        let source = self.source;
        let key = FollowPositions::key(source.data.format.name, &source.table.name, file);
        let last = self.follow.get(&key, file);
        if last.as_ref().is_some_and(|p| p.size == file.size) {
            return true;
        }
        // A compressed file is read from its start again: its lines before the stop are read for
        // the turn and the values they carry, into rows that are dropped.
        let (offset, skip_below) = match &last {
            Some(p) if file.compressed() => (0, p.split.next_number),
            Some(p) => (p.offset, 0),
            None => (0, 0),
        };
        let unreadable =
            |why: String| source.problems.record(Problem::UnreadableFile { file: file.path.clone(), why });
        let opened =
            store_of(self.stores, source, file).and_then(|store| BlockReader::open_at(store, file, offset));
        let mut blocks = match opened {
            Ok(blocks) => blocks,
            Err(why) => {
                unreadable(why.to_string());
                return true;
            }
        };
        started(source, self.config, index, file, self.counters);
        let mut splitter = match (&last, skip_below) {
            (Some(p), 0) => {
                reader.resume_file(file, decoder, &p.reader);
                LineSplitter::resuming(source.max_line_bytes, p.split)
            }
            _ => {
                reader.start_file(file, decoder);
                LineSplitter::new(source.max_line_bytes)
            }
        };
        let batch_size = self.config.batch_size.max(1);
        let mut fed = offset;
        let mut dropped = (skip_below > 0).then(|| {
            let mut dropped = RowDecoder::new(&source.table, self.config.projection.as_deref());
            dropped.start_file(crate::scan::decode::FileContext::new(&source.table.columns, file));
            dropped
        });
        loop {
            let block = match blocks.next_block().await {
                Ok(Some(block)) => block,
                Ok(None) => break,
                Err(why) => {
                    unreadable(why.to_string());
                    return true;
                }
            };
            self.counters.bytes_read.add(block.len());
            fed += block.len() as u64;
            splitter.feed(&block, &mut |line| match &mut dropped {
                Some(dropped) if line_number(&line) < skip_below => {
                    reader.line(line, dropped);
                    if dropped.rows() >= batch_size {
                        drop(dropped.finish());
                    }
                }
                _ => read_line(line, reader, decoder, batch_size, full),
            });
            for (rows, batch) in full.drain(..) {
                *sent += rows;
                if !send(tx, batch, batch_size).await {
                    return false;
                }
            }
            tokio::task::consume_budget().await;
        }
        if let Some(why) = blocks.damage() {
            unreadable(why.to_string());
            return true;
        }
        // The line not ended yet is read once its end is written.
        let (offset, split) = splitter.stopped_at(fed);
        let position = Position { size: file.size, inode: file.inode, offset, split, reader: reader.state() };
        self.follow.set(key, position);
        true
    }
}

/// The store `file` is read from: this machine's for a local file, for an object the store of
/// its bucket in `stores` (the task's runtime).
fn store_of(
    stores: &RuntimeEnv,
    source: &ScanSource,
    file: &SourceFile,
) -> std::io::Result<Arc<dyn object_store::ObjectStore>> {
    if !file.is_remote() {
        return Ok(source.store.clone());
    }
    let place = crate::source::remote::RemotePath::parse(file.canonical()).map_err(std::io::Error::other)?;
    let url = datafusion::execution::object_store::ObjectStoreUrl::parse(place.store.as_str())
        .map_err(std::io::Error::other)?;
    stores.object_store(url).map_err(std::io::Error::other)
}

/// The number of a line the splitter handed over.
fn line_number(line: &crate::source::lines::Line<'_>) -> u64 {
    use crate::source::lines::Line;
    match line {
        Line::Whole { number, .. } | Line::Unterminated { number, .. } | Line::TooLong { number, .. } => {
            *number
        }
    }
}

/// Counts a file the scan starts (transcript `index` of the format), and the damaged lines it
/// skips in it.
fn started(
    source: &ScanSource,
    config: &ScanConfig,
    index: usize,
    file: &SourceFile,
    counters: &ScanCounters,
) {
    counters.files_read.add(1);
    skipped(source, config, index, file, counters);
}

/// Counts the damaged lines of `file` (transcript `index` of the format), which the scan skips
/// (of a followed statement, those its earlier runs have not reported).
fn skipped(
    source: &ScanSource,
    config: &ScanConfig,
    index: usize,
    file: &SourceFile,
    counters: &ScanCounters,
) {
    let mut lines = source.data.file_damage.of_file(index);
    if let Some(follow) = &config.follow {
        let key = super::follow::FollowPositions::key(source.data.format.name, &source.table.name, file);
        lines = follow.new_damage(key, lines);
    }
    if lines > 0 {
        counters.damaged_lines.add(lines as usize);
        source.problems.record(Problem::DamagedLines {
            file: file.path.clone(),
            lines,
            schema: source.data.format.name,
            errors_table: source.data.errors_table(),
        });
    }
}

/// The sending end of a partition's batches, counting the rows sent.
#[derive(Clone, Copy)]
struct Counted<'a> {
    tx: &'a Sender<Result<RecordBatch>>,
    rows: &'a Count,
}

/// Reads one line into `decoder`, and the rows so far into a batch of `full` once they are
/// `batch_size` rows or [`BATCH_LINE_BYTES`] of lines.
fn read_line(
    line: crate::source::lines::Line<'_>,
    reader: &mut LineReader,
    decoder: &mut RowDecoder,
    batch_size: usize,
    full: &mut Vec<(usize, BatchResult)>,
) {
    reader.line(line, decoder);
    if decoder.rows() >= batch_size || reader.row_bytes() >= BATCH_LINE_BYTES {
        reader.clear_row_bytes();
        full.push((decoder.rows(), decoder.finish()));
    }
}

/// The rows of one type that `file` (transcript `index` of the format) holds, known from its
/// events by type while it is as the corpus found it: a scan that has read them need not read
/// the rest. A file with a damaged line is read whole, as before (what the line would have been
/// is not known).
fn rows_known(source: &ScanSource, index: usize, file: &SourceFile) -> Option<u64> {
    let Rows::Type(wanted) = &source.table.rows else { return None };
    let data = &source.data;
    if index >= data.file_events.files() || data.file_damage.of_file(index) > 0 || !file.unchanged() {
        return None;
    }
    Some(data.file_events.events_of(index, Some(wanted)))
}

/// Whether every column asked for is known without reading a line: the file's context and, for
/// `events`, the type. (A type whose fields lie further down is read, to report where they are
/// missing.) The rows then come from the events by type that the corpus holds for each file.
fn rows_from_counts(table: &EventTable, projection: Option<&[usize]>) -> bool {
    let projection: Vec<usize> =
        projection.map_or_else(|| (0..table.columns.len()).collect(), <[usize]>::to_vec);
    let wanted = |i: &usize| match table.columns.get(*i).map(|c| &c.source) {
        Some(source @ ColumnSource::Context(_)) => source.is_per_file(),
        Some(ColumnSource::EventType) => table.rows == Rows::AllEvents,
        _ => false,
    };
    match &table.rows {
        Rows::AllEvents => projection.iter().all(wanted),
        Rows::Type(_) => table.fields_path.is_empty() && projection.iter().all(wanted),
        Rows::Lines | Rows::Errors => false,
    }
}

/// The rows of `file` (transcript `index` of the format) made from its events by type, without
/// reading it; false once the receiver is gone.
async fn counted_rows(
    source: &Arc<ScanSource>,
    (index, file): (usize, &Arc<SourceFile>),
    reader: &mut LineReader,
    decoder: &mut RowDecoder,
    batch_size: usize,
    tx: Counted<'_>,
    sent: &mut usize,
) -> bool {
    if index >= source.data.file_events.files() {
        return true;
    }
    let events = source.data.file_events.of(index);
    reader.start_file(file, decoder);
    for (type_name, count) in events {
        if matches!(&source.table.rows, Rows::Type(t) if t.as_str() != type_name.as_ref()) {
            continue;
        }
        let values = LineValues { type_name: Some(type_name), ..Default::default() };
        for _ in 0..count {
            decoder.push(&values, &mut Vec::new());
            if decoder.rows() >= batch_size {
                *sent += decoder.rows();
                if !send(tx, decoder.finish(), batch_size).await {
                    return false;
                }
                tokio::task::consume_budget().await;
            }
        }
    }
    true
}

/// Sends a batch in slices of `batch_size` rows; false once the receiver is gone.
async fn send(
    tx: Counted<'_>,
    batch: Result<RecordBatch, datafusion::arrow::error::ArrowError>,
    batch_size: usize,
) -> bool {
    let batch = match batch {
        Ok(batch) => batch,
        Err(e) => return tx.tx.send(Err(e.into())).await.is_ok(),
    };
    let mut offset = 0;
    while offset < batch.num_rows() {
        let len = batch_size.min(batch.num_rows() - offset);
        if tx.tx.send(Ok(batch.slice(offset, len))).await.is_err() {
            return false;
        }
        tx.rows.add(len);
        offset += len;
    }
    true
}
