-- Calls and cost by rupu agent: for each agent, its runs, the model calls of its runs (the
-- normalized calls of rupu.calls, joined to rupu.runs by run id), their input tokens (cache
-- included), cache reads, output tokens and cost in US dollars (null when a call of the agent
-- has no price).

-- A spend report (docs/export.md#spend-reports): `period` names the first and last day (of the
-- session's time zone, UTC when unset) of the runs' starts counted, both included (null: no
-- bound).
with period as (select cast(null as date) as first_day, cast(null as date) as last_day),
runs as (
  select r.run_id, r.agent from rupu.runs r cross join period
  where (first_day is null or cast(cast(r.started_at as timestamptz) as date) >= first_day)
    and (last_day is null or cast(cast(r.started_at as timestamptz) as date) <= last_day)
)
select r.agent, count(distinct r.run_id) as runs, count(c.model) as calls,
       coalesce(sum(c.input_tokens), 0) as input_tokens,
       coalesce(sum(c.cache_read_tokens), 0) as cache_read_tokens,
       coalesce(sum(c.output_tokens), 0) as output_tokens,
       case when count(c.cost_usd) = count(c.model)
            then cast(round(coalesce(sum(cast(c.cost_usd as decimal(38, 12))), 0), 6) as double) end
         as cost_usd
from runs r
left join rupu.calls c on c.session_id = r.run_id
group by r.agent
order by cost_usd desc nulls last, r.agent
