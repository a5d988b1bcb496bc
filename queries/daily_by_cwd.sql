-- Daily spend by working directory across every harness, the rows of `txq daily --instances`
-- and `--project`: per day, the working directory of the call's session (null when its harness
-- writes none), harness and model, the calls of the normalized calls table, their input tokens
-- (cache reads and writes included), cache reads, cache writes, output tokens (reasoning
-- included) and cost in US dollars (null when a model of the day has no price).
-- unknown_tier_calls: its calls whose service tier the transcript does not say, priced at
-- the standard rate (docs/prices.md#service-tiers).

-- A spend report (docs/export.md#spend-reports): its days are those of the session's time zone
-- (`set timezone = 'Asia/Tokyo'`; UTC when unset), and `period` names the first and last day it
-- covers, both included (null: no bound).
with period as (select cast(null as date) as first_day, cast(null as date) as last_day),
dated as (select cast(cast(ts as timestamptz) as date) as day, * from calls where ts is not null),
places as (select harness, session_id, parent_session_id, cwd from sessions)
select d.day, p.cwd, d.harness, d.model, count(*) as calls,
       sum(d.input_tokens) as input_tokens, sum(d.cache_read_tokens) as cache_read_tokens,
       sum(d.cache_write_tokens) as cache_write_tokens, sum(d.output_tokens) as output_tokens,
       -- summed as decimals: exact, whatever order the calls are added in
       case when count(d.cost_usd) = count(*)
            then cast(round(sum(cast(d.cost_usd as decimal(38, 12))), 6) as double) end as cost_usd,
       count(case when d.service_tier is null then 1 end) as unknown_tier_calls
from dated d
cross join period
left join places p on p.harness = d.harness and p.session_id = d.session_id
  and p.parent_session_id is not distinct from d.parent_session_id
where (first_day is null or d.day >= first_day) and (last_day is null or d.day <= last_day)
group by d.day, p.cwd, d.harness, d.model
order by d.day, p.cwd, d.harness, d.model
