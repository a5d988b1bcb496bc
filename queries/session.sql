-- Spend by session across every harness, as ccusage's session report: each session of the
-- normalized sessions table (a subagent is one of its own, under its parent), when it ran, its
-- model, calls, input and output tokens, tool calls and cost in US dollars (null when one of its
-- calls has no price), most expensive first.

-- A spend report (docs/export.md#spend-reports): its times are shown in the session's time zone
-- (`set timezone = 'Asia/Tokyo'`; UTC when unset), and `period` names the first and last day it
-- covers, both included (null: no bound): a session is in when the day of its last line
-- (`ended_at`) is, as ccusage's last activity; its sums are its whole session's.
with period as (select cast(null as date) as first_day, cast(null as date) as last_day),
dated as (select cast(cast(ended_at as timestamptz) as date) as last_day_active, * from sessions)
select harness, session_id, parent_session_id, cast(started_at as timestamptz) as started_at,
       cast(ended_at as timestamptz) as ended_at, model, calls, input_tokens, output_tokens,
       tool_calls, round(cost_usd, 6) as cost_usd
from dated cross join period
where (first_day is null or last_day_active >= first_day)
  and (last_day is null or last_day_active <= last_day)
order by cost_usd desc nulls last, started_at, harness, session_id
