//! `block_start(hour) OVER (PARTITION BY .. ORDER BY hour)`: the window function of the blocks
//! report. Over the hours in which a harness made calls, in order, the start of the 5-hour
//! billing block each hour falls in, found in one pass (the report sums each hour's calls once,
//! then each block's hours).

use datafusion::arrow::array::{Array, ArrayRef, Int64Array, UInt32Array};
use datafusion::arrow::compute::{cast, take};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, TimeUnit};
use datafusion::common::{Result, exec_err, plan_err};
use datafusion::logical_expr::function::{PartitionEvaluatorArgs, WindowUDFFieldArgs};
use datafusion::logical_expr::{
    LimitEffect, PartitionEvaluator, Signature, Volatility, WindowUDF, WindowUDFImpl,
};
use datafusion::physical_expr::PhysicalExpr;
use std::sync::Arc;

/// The function's name in SQL.
pub(crate) const NAME: &str = "block_start";

/// How many hours a block lasts.
const BLOCK_HOURS: i64 = 5;

/// `block_start`, to register in a session.
pub(crate) fn window_function() -> WindowUDF {
    WindowUDF::from(BlockStart::new())
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct BlockStart {
    signature: Signature,
}

impl BlockStart {
    fn new() -> Self {
        // A timestamp of any unit and zone, checked when planned (`field`).
        BlockStart { signature: Signature::any(1, Volatility::Immutable) }
    }
}

impl WindowUDFImpl for BlockStart {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn partition_evaluator(&self, _args: PartitionEvaluatorArgs) -> Result<Box<dyn PartitionEvaluator>> {
        Ok(Box::new(Blocks))
    }

    fn field(&self, args: WindowUDFFieldArgs) -> Result<FieldRef> {
        match args.get_input_field(0).map(|f| f.data_type().clone()) {
            Some(t @ DataType::Timestamp(..)) => Ok(Arc::new(Field::new(args.name(), t, true))),
            Some(other) => plan_err!("{NAME} takes the hours of calls, a timestamp, not {other}"),
            None => plan_err!("{NAME} takes one argument, the hour of calls"),
        }
    }

    fn limit_effect(&self, _args: &[Arc<dyn PhysicalExpr>]) -> LimitEffect {
        LimitEffect::Unknown
    }
}

/// The blocks of one partition's hours, in the window's order.
#[derive(Debug)]
struct Blocks;

impl PartitionEvaluator for Blocks {
    fn evaluate_all(&mut self, values: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
        let Some(hours) = values.first() else { return exec_err!("{NAME} takes one argument") };
        let DataType::Timestamp(unit, _) = hours.data_type() else {
            return exec_err!("{NAME} takes a timestamp, not {}", hours.data_type());
        };
        let hour: i64 = match unit {
            TimeUnit::Second => 3_600,
            TimeUnit::Millisecond => 3_600_000,
            TimeUnit::Microsecond => 3_600_000_000,
            TimeUnit::Nanosecond => 3_600_000_000_000,
        };
        let values = cast(hours, &DataType::Int64)?;
        let Some(values) = values.as_any().downcast_ref::<Int64Array>() else {
            return exec_err!("{NAME}: the hours could not be read");
        };
        let starts = start_rows(values.iter().take(rows), hour);
        Ok(take(hours.as_ref(), &UInt32Array::from(starts), None)?)
    }
}

/// For each hour of `hours` (ascending; `None` has no block), the row of its block's start. A
/// block starts at the first hour that no earlier block holds, and holds the hours `0..5` whole
/// hours after its start that no earlier block holds (what `range(start, start + 5 hours, 1
/// hour)` lists: an hour off that grid, as a time zone's half-hour shift makes, is not in it).
pub(crate) fn start_rows(hours: impl Iterator<Item = Option<i64>>, hour: i64) -> Vec<Option<u32>> {
    let span = BLOCK_HOURS.saturating_mul(hour);
    // The blocks whose 5 hours may still hold a later hour: (start, its row), earliest first.
    let mut open: Vec<(i64, u32)> = Vec::new();
    let mut starts = Vec::new();
    for (row, value) in hours.enumerate() {
        let Some(value) = value else {
            starts.push(None);
            continue;
        };
        open.retain(|&(start, _)| value < start.saturating_add(span));
        let holding = open.iter().find(|&&(start, _)| value >= start && (value - start) % hour == 0);
        match holding {
            Some(&(_, at)) => starts.push(Some(at)),
            None => {
                open.push((value, row as u32));
                starts.push(Some(row as u32));
            }
        }
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::start_rows;

    const H: i64 = 3_600;

    fn starts(hours: &[Option<i64>]) -> Vec<Option<u32>> {
        start_rows(hours.iter().copied(), H)
    }

    #[test]
    fn a_block_holds_the_hours_of_its_five_and_the_next_starts_at_the_first_hour_after() {
        // 0..4 in the first block; 5 starts the second (a call at the very end is the next's).
        let hours: Vec<Option<i64>> = [0, 1, 4, 5, 9, 10, 20].iter().map(|h| Some(h * H)).collect();
        assert_eq!(starts(&hours), [0, 0, 0, 3, 3, 5, 6].map(Some).to_vec());
    }

    #[test]
    fn an_hour_off_the_grid_starts_a_block_and_the_hours_on_it_stay_in_the_earlier_one() {
        // 0, then 1.5 (a half-hour shift) not among 0's five hours: a block of its own; 3 is
        // among 0's, not 1.5's.
        let hours = [Some(0), Some(3 * H / 2), Some(3 * H), Some(7 * H / 2), Some(6 * H)];
        assert_eq!(starts(&hours), [Some(0), Some(1), Some(0), Some(1), Some(4)]);
    }

    #[test]
    fn a_missing_hour_has_no_block_and_changes_none() {
        assert_eq!(starts(&[Some(0), None, Some(H)]), [Some(0), None, Some(0)]);
        assert_eq!(starts(&[]), []);
    }
}
