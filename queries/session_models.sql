-- Spend by session and model across every harness, the rows of `txq session`: for each session
-- of the normalized sessions table with calls, as its file names it and as its lines do, its
-- working directory, when it ran, and per model its calls, input tokens (cache reads and
-- writes included), cache reads, cache writes, output tokens (reasoning included), reasoning
-- tokens and cost in US dollars (null when the model has no price).
-- unknown_tier_calls: its calls whose service tier the transcript does not say, priced at
-- the standard rate (docs/prices.md#service-tiers).

-- A spend report (docs/export.md#spend-reports): its times are shown in the session's time zone
-- (`set timezone = 'Asia/Tokyo'`; UTC when unset), and `period` names the first and
-- last day it covers, both included (null: no bound): a session is in when the day of its last
-- line (`ended_at`) is, as ccusage's last activity; its sums are its whole session's.
with period as (select cast(null as date) as first_day, cast(null as date) as last_day),
per_model as (
  select harness, session_id, parent_session_id, model, count(*) as calls,
         sum(input_tokens) as input_tokens, sum(cache_read_tokens) as cache_read_tokens,
         sum(cache_write_tokens) as cache_write_tokens, sum(output_tokens) as output_tokens,
         sum(reasoning_tokens) as reasoning_tokens,
         -- summed as decimals: exact, whatever order the calls are added in
         case when count(cost_usd) = count(*)
              then cast(round(sum(cast(cost_usd as decimal(38, 12))), 6) as double) end as cost_usd,
         count(case when service_tier is null then 1 end) as unknown_tier_calls
  from calls
  group by harness, session_id, parent_session_id, model
),
dated as (select cast(cast(ended_at as timestamptz) as date) as last_day_active, * from sessions)
select s.harness, s.file_session_id, s.session_id, s.parent_session_id, s.cwd,
       cast(s.started_at as timestamptz) as started_at, cast(s.ended_at as timestamptz) as ended_at,
       m.model, m.calls, m.input_tokens, m.cache_read_tokens, m.cache_write_tokens, m.output_tokens,
       m.reasoning_tokens, m.cost_usd, m.unknown_tier_calls
from dated s
cross join period
join per_model m on m.harness = s.harness and m.session_id = s.session_id
  and m.parent_session_id is not distinct from s.parent_session_id
where (first_day is null or last_day_active >= first_day)
  and (last_day is null or last_day_active <= last_day)
order by s.harness, s.session_id, s.parent_session_id, m.model
