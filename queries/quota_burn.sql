-- What burned the quota: for each rate-limit window a harness reported (a row per harness,
-- window and reset: its plan, primary or secondary, its length and when it resets), how its
-- used percent grew from the first observation to the last, and what spent in it: the
-- sessions, calls and cost in US dollars of the harness's calls made within the window (from
-- resets_at less its length to resets_at), its top models by cost (`model $cost`, at most
-- three; `$?` for a model with no price) and its top tools by calls (`tool calls`, at most
-- three). cost_usd is null when a call in it has no price.

-- The rules (docs/harnesses.md#rate_limits):
-- - A window's resets_at is worked out by the harness from a time left, so it can differ by a
--   second or so between lines: the observations of a harness's window whose resets_at are
--   within 60 seconds of the one before (in resets_at order) are one window, its resets_at the
--   one last written (by time, then file and line).
-- - start_percent and end_percent are the used percent of the window's first and last
--   observation with one (by time, then file and line); the plan is the last one written.
--   first_seen and last_seen are its first and last observation's times.
-- - The calls and tool calls in a window are the harness's (every session of it, as the quota is
--   the account's) with a time in [resets_at - window_minutes, resets_at).
with observed as (
  select harness, "window", window_minutes, used_percent, resets_at, plan, ts, file, line,
         lag(resets_at) over (partition by harness, "window", window_minutes order by resets_at, ts, file, line)
           as previous_reset
  from rate_limits
  where resets_at is not null and window_minutes is not null and ts is not null
),
numbered as (
  select *,
         sum(case when previous_reset is null or resets_at - previous_reset > interval '60 seconds' then 1 else 0 end)
           over (partition by harness, "window", window_minutes order by resets_at, ts, file, line
                 rows between unbounded preceding and current row) as instance
  from observed
),
windows as (
  select harness, "window", window_minutes, instance, last_value(resets_at order by ts, file, line) as resets_at,
         min(ts) as first_seen, max(ts) as last_seen,
         first_value(used_percent order by used_percent is null, ts, file, line) as start_percent,
         last_value(used_percent order by used_percent is not null, ts, file, line) as end_percent,
         last_value(plan order by plan is not null, ts, file, line) as plan
  from numbered
  group by harness, "window", window_minutes, instance
),
spans as (
  select *, to_unixtime(resets_at) - window_minutes * 60 as from_second, to_unixtime(resets_at) as to_second
  from windows
),
spent as (
  select w.harness, w."window", w.window_minutes, w.instance, c.session_id, c.model, c.ts, c.cost_usd
  from spans w
  join calls c on c.harness = w.harness and c.ts is not null
    and to_unixtime(c.ts) >= w.from_second and to_unixtime(c.ts) < w.to_second
),
spending as (
  select harness, "window", window_minutes, instance, count(distinct session_id) as sessions,
         count(*) as calls,
         -- summed as decimals: exact, whatever order the calls are added in
         case when count(cost_usd) = count(*)
              then cast(round(sum(cast(cost_usd as decimal(38, 12))), 6) as double) end as cost_usd
  from spent
  group by harness, "window", window_minutes, instance
),
by_model as (
  select harness, "window", window_minutes, instance, model, count(*) as calls,
         case when count(cost_usd) = count(*) then sum(cast(cost_usd as decimal(38, 12))) end as cost
  from spent
  group by harness, "window", window_minutes, instance, model
),
ranked_models as (
  select *, row_number() over (partition by harness, "window", window_minutes, instance
                               order by cost desc nulls last, calls desc, model) as nth
  from by_model
),
top_models as (
  select harness, "window", window_minutes, instance,
         string_agg(coalesce(model, '?') || ' $' ||
                    coalesce(cast(cast(round(cost, 2) as decimal(20, 2)) as varchar), '?'), ', ' order by nth)
           as top_models
  from ranked_models
  where nth <= 3
  group by harness, "window", window_minutes, instance
),
by_tool as (
  select w.harness, w."window", w.window_minutes, w.instance, t.tool, count(*) as calls
  from spans w
  join tool_calls t on t.harness = w.harness and t.ts is not null
    and to_unixtime(t.ts) >= w.from_second and to_unixtime(t.ts) < w.to_second
  group by w.harness, w."window", w.window_minutes, w.instance, t.tool
),
top_tools as (
  select harness, "window", window_minutes, instance,
         string_agg(coalesce(tool, '?') || ' ' || cast(calls as varchar), ', ' order by nth) as top_tools
  from (select *, row_number() over (partition by harness, "window", window_minutes, instance
                                     order by calls desc, tool) as nth
        from by_tool)
  where nth <= 3
  group by harness, "window", window_minutes, instance
)
select w.harness, w.plan, w."window", w.window_minutes, w.resets_at, w.first_seen, w.last_seen,
       w.start_percent, w.end_percent, coalesce(s.sessions, 0) as sessions, coalesce(s.calls, 0) as calls,
       case when s.calls is null then 0.0 else s.cost_usd end as cost_usd, m.top_models, t.top_tools
from windows w
left join spending s on s.harness = w.harness and s."window" = w."window"
  and s.window_minutes = w.window_minutes and s.instance = w.instance
left join top_models m on m.harness = w.harness and m."window" = w."window"
  and m.window_minutes = w.window_minutes and m.instance = w.instance
left join top_tools t on t.harness = w.harness and t."window" = w."window"
  and t.window_minutes = w.window_minutes and t.instance = w.instance
order by w.harness, w."window", w.resets_at
