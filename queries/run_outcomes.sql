-- Run outcomes over time: rupu runs per hour (when the runs reported span less than 3 days)
-- or per day of their start, by outcome: ok, error, or aborted with its cause (no_run_complete:
-- crashed, killed or still being written; operator_stop, paused, or what else the
-- run_complete's error says), as in aborted_runs.

-- A spend report's days (docs/export.md#spend-reports): `period` names the first and last day
-- (of the session's time zone, UTC when unset) of the starts counted, both included (null: no
-- bound). Runs with no start time are left out.
with period as (select cast(null as date) as first_day, cast(null as date) as last_day),
started as (
  select cast(started_at as timestamptz) as at,
         case when status = 'aborted'
              then 'aborted: ' || case when not completed then 'no_run_complete' else coalesce(error, 'aborted') end
              else coalesce(status, 'unknown') end as outcome
  from rupu.runs where started_at is not null
),
kept as (
  select s.* from started s cross join period
  where (first_day is null or cast(at as date) >= first_day)
    and (last_day is null or cast(at as date) <= last_day)
),
span as (
  select case when max(at) < min(at) + interval '3 days' then 'hour' else 'day' end as unit from kept
)
select case when unit = 'hour' then date_trunc('hour', at) else date_trunc('day', at) end as period_start,
       unit, outcome, count(*) as runs
from kept cross join span
group by 1, unit, outcome
order by period_start, outcome
