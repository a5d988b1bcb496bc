-- Spend per 5-hour billing block across every harness, as ccusage's blocks report: each
-- harness's calls in windows of 5 hours, a window starting at the hour of the first call after
-- the one before it ended; per block its start and end, its first and last call, the calls,
-- their input tokens (cache included), cache reads, cache writes, output tokens, cost in US
-- dollars (null when a model of the block has no price) and models.
-- unknown_tier_calls: its calls whose service tier the transcript does not say, priced at
-- the standard rate (docs/prices.md#service-tiers).

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
with period as (select cast(null as date) as first_day, cast(null as date) as last_day),
-- Each harness's calls summed by the hour they were made in: the calls are read once.
hourly as (
  select harness, date_trunc('hour', cast(ts as timestamptz)) as hour,
         min(cast(ts as timestamptz)) as first_call, max(cast(ts as timestamptz)) as last_call,
         count(*) as calls, count(cost_usd) as priced_calls, sum(input_tokens) as input_tokens,
         sum(cache_read_tokens) as cache_read_tokens, sum(cache_write_tokens) as cache_write_tokens,
         sum(output_tokens) as output_tokens,
         -- summed as decimals: exact, whatever order the calls are added in
         sum(cast(cost_usd as decimal(38, 12))) as cost_usd, array_agg(distinct model) as models,
         count(case when service_tier is null then 1 end) as unknown_tier_calls
  from calls where ts is not null
  group by 1, 2
),
-- Each hour with the start of its block: `block_start` walks the harness's hours in order, a
-- block starting at the first hour no earlier block holds and holding those of its 5 hours that
-- no earlier block holds (docs/export.md#blocks).
placed as (
  select *, block_start(hour) over (partition by harness order by hour) as block_start from hourly
)
select harness, block_start, block_start + interval '5 hours' as block_end,
       min(first_call) as first_call, max(last_call) as last_call, sum(calls) as calls,
       sum(input_tokens) as input_tokens, sum(cache_read_tokens) as cache_read_tokens,
       sum(cache_write_tokens) as cache_write_tokens, sum(output_tokens) as output_tokens,
       case when sum(priced_calls) = sum(calls) then cast(round(sum(cost_usd), 6) as double) end as cost_usd,
       array_to_string(array_sort(array_distinct(flatten(array_agg(models)))), ', ') as models,
       sum(unknown_tier_calls) as unknown_tier_calls
from placed
cross join period
where (first_day is null or cast(block_start as date) >= first_day)
  and (last_day is null or cast(block_start as date) <= last_day)
group by harness, block_start
order by block_start, harness
