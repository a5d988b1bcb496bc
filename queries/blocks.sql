-- Spend per 5-hour billing block across every harness, as ccusage's blocks report: each
-- harness's calls in windows of 5 hours, a window starting at the hour of the first call after
-- the one before it ended; per block its start and end, its first and last call, the calls,
-- their input tokens (cache included), cache reads, cache writes, output tokens, cost in US
-- dollars (null when a model of the block has no price) and models.

-- A spend report (docs/export.md#blocks). The rules:
-- - A block is one harness's (each harness's plan has a window of its own). It starts at the
--   hour, in the session's time zone (`set timezone = 'Asia/Kolkata'`; UTC when unset), of the
--   first call that no earlier block of the harness holds, and holds the calls of the 5 hours
--   from there: a call at its end or later starts the next block (ccusage puts a call at the
--   very end into the earlier one).
-- - So 5 hours without calls end a block too. ccusage lists such an idle gap as a row of its
--   own; here it is the time between a block's last_call and the next block_start.
-- - `period` names the first and last day, both included (null: no bound), of the blocks
--   shown: those that start on them. Blocks are found among all the calls first, so a block
--   begun before the first day is not cut short, nor are the ones after it moved.
-- - Calls with no time are left out.
with recursive
period as (select cast(null as date) as first_day, cast(null as date) as last_day),
-- Each call, with the hour it was made in.
timed as (
  select *, date_trunc('hour', cast(ts as timestamptz)) as hour from calls where ts is not null
),
-- The hours in which each harness made calls.
active as (select harness, array_agg(distinct hour) as hours from timed group by harness),
-- Each block's start, with the hours of calls from there on: the next block starts at the
-- first of them that its 5 hours do not hold.
blocks (harness, block_start, hours) as (
  select harness, array_min(hours), hours from active
  union all
  select harness, array_min(later), later
  from (
    select harness,
           array_except(hours, range(block_start, block_start + interval '5 hours', interval '1 hour')) as later
    from blocks
  ) as rest
  where cardinality(later) > 0
),
-- The 5 hours of each block.
block_hours as (
  select harness, block_start,
         unnest(range(block_start, block_start + interval '5 hours', interval '1 hour')) as hour
  from blocks
)
select b.harness, b.block_start, b.block_start + interval '5 hours' as block_end,
       min(cast(t.ts as timestamptz)) as first_call, max(cast(t.ts as timestamptz)) as last_call,
       count(*) as calls, sum(t.input_tokens) as input_tokens,
       sum(t.cache_read_tokens) as cache_read_tokens, sum(t.cache_write_tokens) as cache_write_tokens,
       sum(t.output_tokens) as output_tokens,
       -- summed as decimals: exact, whatever order the calls are added in
       case when count(t.cost_usd) = count(*)
            then cast(round(sum(cast(t.cost_usd as decimal(38, 12))), 6) as double) end as cost_usd,
       array_to_string(array_sort(array_agg(distinct t.model)), ', ') as models
from block_hours b
join timed t on t.harness = b.harness and t.hour = b.hour
cross join period
where (first_day is null or cast(b.block_start as date) >= first_day)
  and (last_day is null or cast(b.block_start as date) <= last_day)
group by b.harness, b.block_start
order by b.block_start, b.harness
