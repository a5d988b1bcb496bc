//! The memory a statement may hold: the limit (`--memory-limit`, by default half the machine's
//! memory), the pool that holds sorts, joins and aggregations to it by making them spill to disk,
//! where they spill, and the error that names the limit when even spilling cannot serve.

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
use datafusion::execution::memory_pool::{
    FairSpillPool, MemoryConsumer, MemoryLimit, MemoryPool, MemoryReservation,
};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::prelude::SessionConfig;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The limit where the machine's memory cannot be read.
pub(crate) const FALLBACK_LIMIT: u64 = 2 << 30;

/// The words every error of a refused reservation starts with (how the command line finds them
/// inside DataFusion's wrappings).
pub(crate) const EXHAUSTED: &str = "the statement needs more memory than --memory-limit";

/// How much memory statements may hold, and where they spill what does not fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryOptions {
    /// Bytes the sorts, joins, aggregations and windows of a session may hold together.
    pub limit: u64,
    /// Where spill files go: a fresh directory inside it, removed at the end (by default inside
    /// the system's temporary directory, `$TMPDIR` or `/tmp`).
    pub spill_dir: Option<PathBuf>,
}

impl Default for MemoryOptions {
    fn default() -> Self {
        Self { limit: default_limit(), spill_dir: None }
    }
}

/// Half the memory of the machine, or of the control group txq runs in when that is less
/// (a container's limit); [`FALLBACK_LIMIT`] where neither can be read.
pub(crate) fn default_limit() -> u64 {
    let machine = read_meminfo_total(Path::new("/proc/meminfo"));
    let group = cgroup_limit(Path::new("/sys/fs/cgroup"));
    match (machine, group) {
        (Some(m), Some(g)) => m.min(g) / 2,
        (Some(m), None) => m / 2,
        (None, Some(g)) => g / 2,
        (None, None) => FALLBACK_LIMIT,
    }
}

/// `MemTotal` of a `/proc/meminfo`, in bytes.
fn read_meminfo_total(path: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.trim_start_matches("MemTotal:").trim().trim_end_matches("kB").trim().parse().ok()?;
    kib.checked_mul(1024).filter(|&b| b > 0)
}

/// The memory limit of the control group (v2 `memory.max`, else v1 `memory.limit_in_bytes`);
/// `None` when unlimited or unreadable.
fn cgroup_limit(root: &Path) -> Option<u64> {
    // v1 writes "no limit" as a huge number rounded to pages.
    let limited = |bytes: u64| bytes > 0 && bytes < (1 << 60);
    let read = |path: PathBuf| {
        std::fs::read_to_string(path).ok()?.trim().parse::<u64>().ok().filter(|&b| limited(b))
    };
    read(root.join("memory.max")).or_else(|| read(root.join("memory/memory.limit_in_bytes")))
}

/// The runtime of a session held to `options`: a pool of `limit` bytes ([`LimitedPool`]),
/// spill files in a directory of its own, and the process's object stores (local files, and each
/// bucket's store made on first use: [`crate::source::remote::registry`]).
pub(crate) fn runtime(options: &MemoryOptions) -> Result<Arc<RuntimeEnv>> {
    let mode = match &options.spill_dir {
        Some(dir) => DiskManagerMode::Directories(vec![dir.clone()]),
        None => DiskManagerMode::OsTmpDirectory,
    };
    let limit = usize::try_from(options.limit).unwrap_or(usize::MAX);
    RuntimeEnvBuilder::new()
        .with_object_store_registry(crate::source::remote::registry())
        .with_memory_pool(Arc::new(LimitedPool::new(limit)))
        .with_disk_manager_builder(DiskManagerBuilder::default().with_mode(mode))
        .build_arc()
}

/// `config` made to spill within the limit:
///
/// - A sort sorts all its input in one stream: sorts of each partition, merged after, compete
///   for the memory that merging their spilled runs needs and refuse each other well within
///   the limit.
/// - What a sort sets aside to merge its spilled runs is a share of the quarter of the limit
///   kept for what cannot spill (DataFusion's fixed 10 MiB would refuse every sort under a
///   limit of a few times that, though a sort spills in far less).
/// - Under a limit of 1 GiB, batches hold fewer rows than 8192 (a row for each 128 KiB of the
///   limit, 64 at least): a sort spills its runs in batches, and merging them takes two
///   batches of each run at once, which at 8192 rows of large tool outputs is more than a
///   small limit.
pub(crate) fn with_limits(config: SessionConfig, options: &MemoryOptions) -> SessionConfig {
    let rows = (options.limit / ROW_SHARE).clamp(64, 8192) as usize;
    let rows = rows.min(config.batch_size());
    let mut config = config.with_batch_size(rows).with_repartition_sorts(false);
    let partitions = config.target_partitions().max(1) as u64;
    let execution = &mut config.options_mut().execution;
    let share = options.limit / (4 * partitions);
    execution.sort_spill_reservation_bytes =
        execution.sort_spill_reservation_bytes.min(usize::try_from(share).unwrap_or(usize::MAX));
    config
}

/// The bytes of the limit for each row of a batch (see [`with_limits`]).
const ROW_SHARE: u64 = 128 << 10;

/// The part of the limit that operators able to spill share between them (fairly: DataFusion's
/// fair spill pool); the rest is kept for what cannot spill, such as the buffers a sort merges
/// its spilled runs in, which spilling operators would otherwise take and leave the merge none.
const SPILLABLE_SHARE: (usize, usize) = (3, 4);

/// The pool of a session, held to the limit: operators that can spill (sorts, aggregations)
/// share [`SPILLABLE_SHARE`] of it fairly, as DataFusion's fair spill pool shares; operators
/// that cannot spill take what is free, first come; together they never hold more than the
/// limit. A refusal names the limit and the flag that sets it.
#[derive(Debug)]
struct LimitedPool {
    spillable: FairSpillPool,
    /// Bytes held by consumers that cannot spill (locked while any reservation is decided).
    unspillable: std::sync::Mutex<usize>,
    limit: usize,
}

impl LimitedPool {
    fn new(limit: usize) -> Self {
        let (part, whole) = SPILLABLE_SHARE;
        let spillable = FairSpillPool::new(limit / whole * part + limit % whole * part / whole);
        Self { spillable, unspillable: std::sync::Mutex::default(), limit }
    }

    fn unspillable(&self) -> std::sync::MutexGuard<'_, usize> {
        self.unspillable.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Refused with DataFusion's `ResourcesExhausted`, which operators that can spill take as
    /// the sign to spill (and a merge of spilled runs as the sign to merge fewer at once); the
    /// message is what the user reads when none can.
    fn refusal(&self, reservation: &MemoryReservation, additional: usize) -> DataFusionError {
        DataFusionError::ResourcesExhausted(format!(
            "{EXHAUSTED} {} allows, even spilling to disk ({} asked for {} more, holding {}); raise --memory-limit",
            crate::text::size::describe(self.limit as u64),
            reservation.consumer().name(),
            crate::text::size::describe(additional as u64),
            crate::text::size::describe(reservation.size() as u64),
        ))
    }
}

impl std::fmt::Display for LimitedPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "limited(limit: {}, spilling: {})",
            crate::text::size::describe(self.limit as u64),
            self.spillable
        )
    }
}

impl MemoryPool for LimitedPool {
    fn name(&self) -> &str {
        "limited"
    }
    fn register(&self, consumer: &MemoryConsumer) {
        self.spillable.register(consumer)
    }
    fn unregister(&self, consumer: &MemoryConsumer) {
        self.spillable.unregister(consumer)
    }
    fn grow(&self, reservation: &MemoryReservation, additional: usize) {
        match reservation.consumer().can_spill() {
            true => self.spillable.grow(reservation, additional),
            false => *self.unspillable() += additional,
        }
    }
    /// Called once the reservation is `shrink` smaller.
    fn shrink(&self, reservation: &MemoryReservation, shrink: usize) {
        match reservation.consumer().can_spill() {
            true => self.spillable.shrink(reservation, shrink),
            false => {
                let mut held = self.unspillable();
                *held = held.saturating_sub(shrink);
            }
        }
    }
    /// Called before the reservation grows.
    fn try_grow(&self, reservation: &MemoryReservation, additional: usize) -> Result<()> {
        let mut held = self.unspillable();
        let spilling = self.spillable.reserved();
        let free = self.limit.saturating_sub(*held + spilling);
        if additional > free {
            return Err(self.refusal(reservation, additional));
        }
        if reservation.consumer().can_spill() {
            return self.spillable.try_grow(reservation, additional).map_err(|e| match e {
                DataFusionError::ResourcesExhausted(_) => self.refusal(reservation, additional),
                other => other,
            });
        }
        *held += additional;
        Ok(())
    }
    fn reserved(&self) -> usize {
        *self.unspillable() + self.spillable.reserved()
    }
    fn memory_limit(&self) -> MemoryLimit {
        MemoryLimit::Finite(self.limit)
    }
}

/// The message of an error that is, at its root, a refused reservation: the pool's own words
/// (DataFusion wraps them in advice about its own settings, which txq does not read).
pub(crate) fn exhausted_message(e: &DataFusionError) -> Option<String> {
    let DataFusionError::ResourcesExhausted(message) = e.find_root() else {
        return None;
    };
    Some(match message.find(EXHAUSTED) {
        Some(at) => message[at..].to_string(),
        None => format!("{EXHAUSTED} allows, even spilling to disk ({message}); raise --memory-limit"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_and_cgroup_limits_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let meminfo = dir.path().join("meminfo");
        std::fs::write(&meminfo, "MemTotal:       16303112 kB\nMemFree:  1 kB\n").unwrap();
        assert_eq!(read_meminfo_total(&meminfo), Some(16303112 * 1024));
        assert_eq!(read_meminfo_total(&dir.path().join("none")), None);
        std::fs::write(dir.path().join("memory.max"), "max\n").unwrap();
        assert_eq!(cgroup_limit(dir.path()), None);
        std::fs::write(dir.path().join("memory.max"), "1073741824\n").unwrap();
        assert_eq!(cgroup_limit(dir.path()), Some(1 << 30));
        assert!(default_limit() > 0);
    }

    #[test]
    fn a_refusal_names_the_limit_and_the_flag() {
        let pool: Arc<dyn MemoryPool> = Arc::new(LimitedPool::new(1 << 20));
        let reservation = MemoryConsumer::new("HashJoinInput").register(&pool);
        let e = reservation.try_grow(2 << 20).unwrap_err();
        let wrapped = DataFusionError::Context("Not enough memory".into(), Box::new(e));
        assert_eq!(
            exhausted_message(&wrapped).as_deref(),
            Some(
                "the statement needs more memory than --memory-limit 1 MiB allows, even spilling to disk (HashJoinInput asked for 2 MiB more, holding 0 bytes); raise --memory-limit"
            )
        );
        assert_eq!(exhausted_message(&DataFusionError::Plan("no".into())), None);
    }

    #[test]
    fn spilling_operators_leave_a_quarter_for_the_others_and_all_stay_within_the_limit() {
        let pool: Arc<dyn MemoryPool> = Arc::new(LimitedPool::new(1000));
        let sorts: Vec<MemoryReservation> = (0..2)
            .map(|i| MemoryConsumer::new(format!("sort{i}")).with_can_spill(true).register(&pool))
            .collect();
        // Two spilling operators share 750 bytes: 375 each.
        assert!(sorts[0].try_grow(376).is_err());
        sorts[0].try_grow(375).unwrap();
        sorts[1].try_grow(375).unwrap();
        // What cannot spill takes the rest, and no more.
        let merge = MemoryConsumer::new("merge").register(&pool);
        merge.try_grow(250).unwrap();
        assert!(merge.try_grow(1).is_err());
        assert_eq!(pool.reserved(), 1000);
        sorts[1].shrink(375);
        // A join build side takes what is free, and the spilling operators then only what it leaves.
        let build = MemoryConsumer::new("build").register(&pool);
        build.try_grow(300).unwrap();
        assert!(sorts[1].try_grow(100).is_err());
        sorts[1].try_grow(75).unwrap();
        assert_eq!(pool.reserved(), 1000);
        drop(build);
        drop(merge);
        assert_eq!(pool.reserved(), 450);
    }
}
