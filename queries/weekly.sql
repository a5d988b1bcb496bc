-- Weekly spend across every harness, as ccusage's weekly report: per week (its Monday) and
-- model, the calls of the normalized calls table (each response counted once), their input
-- tokens (cache included), cache reads, cache writes, output tokens and cost in US dollars
-- (null when a model of the week has no price). Calls with no time are left out.
-- unknown_tier_calls: its calls whose service tier the transcript does not say, priced at
-- the standard rate (docs/prices.md#service-tiers).

-- A spend report (docs/export.md#spend-reports): its days are those of the session's time zone
-- (`set timezone = 'Asia/Tokyo'`; UTC when unset), and `period` names the first and last day it
-- covers, both included (null: no bound): a week cut by them sums the calls of its days within.
with period as (select cast(null as date) as first_day, cast(null as date) as last_day),
dated as (
  select cast(cast(ts as timestamptz) as date) as day,
         cast(date_trunc('week', cast(ts as timestamptz)) as date) as week, *
  from calls where ts is not null
)
select week, harness, model, count(*) as calls,
       sum(input_tokens) as input_tokens, sum(cache_read_tokens) as cache_read_tokens,
       sum(cache_write_tokens) as cache_write_tokens, sum(output_tokens) as output_tokens,
       -- summed as decimals: exact, whatever order the calls are added in
       case when count(cost_usd) = count(*)
            then cast(round(sum(cast(cost_usd as decimal(38, 12))), 6) as double) end as cost_usd,
       count(case when service_tier is null then 1 end) as unknown_tier_calls
from dated cross join period
where (first_day is null or day >= first_day) and (last_day is null or day <= last_day)
group by week, harness, model
order by week, harness, model
