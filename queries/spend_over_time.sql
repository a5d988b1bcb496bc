-- Spend over time by model across every harness, for the charts of `txq report`: per hour when
-- the calls reported span less than 3 days, else per day, and per model, the calls of the
-- normalized calls table (each response counted once), their input tokens (cache included),
-- the part of them neither read from nor written to the cache, cache reads, cache writes,
-- output tokens and cost in US dollars (null when a call of the model has no price there).

-- A spend report (docs/export.md#spend-reports): its hours and days are those of the session's
-- time zone (UTC when unset), and `period` names the first and last day it covers, both
-- included (null: no bound); the span that chooses hours or days is that of the calls kept.
-- Calls with no time are left out.
with period as (select cast(null as date) as first_day, cast(null as date) as last_day),
dated as (
  select cast(cast(ts as timestamptz) as date) as day, cast(ts as timestamptz) as at, *
  from calls where ts is not null
),
kept as (
  select d.* from dated d cross join period
  where (first_day is null or day >= first_day) and (last_day is null or day <= last_day)
),
span as (
  select case when max(at) < min(at) + interval '3 days' then 'hour' else 'day' end as unit from kept
)
select case when unit = 'hour' then date_trunc('hour', at) else date_trunc('day', at) end as period_start,
       unit, model, count(*) as calls,
       sum(input_tokens) as input_tokens,
       sum(input_tokens - cache_read_tokens - cache_write_tokens) as uncached_input_tokens,
       sum(cache_read_tokens) as cache_read_tokens, sum(cache_write_tokens) as cache_write_tokens,
       sum(output_tokens) as output_tokens,
       -- summed as decimals: exact, whatever order the calls are added in
       case when count(cost_usd) = count(*)
            then cast(round(sum(cast(cost_usd as decimal(38, 12))), 6) as double) end as cost_usd
from kept cross join span
group by 1, unit, model
order by period_start, model
