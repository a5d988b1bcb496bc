-- Spend by top-level session with everything it ran under it: for each session at the top of a
-- chain of parents (`sessions.root_session_id`), where and when it ran, its own calls' cost, the
-- cost of every session below it at any depth (subagents, spawned and forked threads), and their
-- sum, in US dollars (null when a call among them has no price); how many sessions are below it;
-- its own calls and theirs. Each call is counted once: `calls` holds no replayed copy (a forked
-- or spawned thread's replay of its parent's history is the parent's calls, not the child's).

-- A chain whose top is no session (its transcript is gone) is listed under the id its sessions
-- name, with the time and place of its earliest session; see docs/harnesses.md#subagents.
with members as (
  select harness, session_id, parent_session_id, root_session_id, started_at, cwd,
         coalesce(session_id = root_session_id, false) as own
  from sessions
),
tops as (
  select harness, root_session_id,
         first_value(started_at order by own desc, started_at nulls last, session_id) as started_at,
         first_value(cwd order by own desc, started_at nulls last, session_id) as cwd,
         count(*) filter (where not own) as subagents
  from members
  group by harness, root_session_id
),
spent as (
  select m.harness, m.root_session_id, m.own, cast(c.cost_usd as decimal(38, 12)) as cost
  from calls c
  join members m on m.harness = c.harness and m.session_id = c.session_id
    and m.parent_session_id is not distinct from c.parent_session_id
),
sums as (
  -- summed as decimals: exact, whatever order the calls are added in
  select harness, root_session_id,
         count(*) filter (where own) as calls,
         count(*) filter (where not own) as subagent_calls,
         count(*) filter (where own and cost is null) as own_unpriced,
         count(*) filter (where not own and cost is null) as subagent_unpriced,
         sum(cost) filter (where own) as own_cost,
         sum(cost) filter (where not own) as subagent_cost
  from spent
  group by harness, root_session_id
)
select t.harness, t.root_session_id as session_id, cast(t.started_at as timestamptz) as started_at, t.cwd,
       case when coalesce(s.own_unpriced, 0) = 0 then cast(coalesce(s.own_cost, 0) as double) end as own_cost_usd,
       case when coalesce(s.subagent_unpriced, 0) = 0
            then cast(coalesce(s.subagent_cost, 0) as double) end as subagent_cost_usd,
       case when coalesce(s.own_unpriced, 0) + coalesce(s.subagent_unpriced, 0) = 0
            then cast(coalesce(s.own_cost, 0) + coalesce(s.subagent_cost, 0) as double) end as cost_usd,
       t.subagents, coalesce(s.calls, 0) as calls, coalesce(s.subagent_calls, 0) as subagent_calls
from tops t
left join sums s on s.harness = t.harness and s.root_session_id is not distinct from t.root_session_id
order by cost_usd desc nulls last, t.harness, t.root_session_id
