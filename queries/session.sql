-- Spend by session across every harness, as ccusage's session report: each session of the
-- normalized sessions table (a subagent is one of its own, under its parent), when it ran, its
-- model, calls, input and output tokens, tool calls and cost in US dollars (null when one of its
-- calls has no price), most expensive first.
select harness, session_id, parent_session_id, started_at, ended_at, model, calls,
       input_tokens, output_tokens, tool_calls, round(cost_usd, 6) as cost_usd
from sessions
order by cost_usd desc nulls last, started_at, harness, session_id
