-- Spend by git commit, an attribution by time and branch, not a fact: each session with a
-- project and a branch (sessions.project, sessions.git_branch) counts for the first commit of
-- git_commits on that branch of that project authored at or after the session's end (its last
-- line), that is, the commit whose authored_at is the first at or after it, the previous commit
-- on the branch (by authored_at, then hash) authored before it; a session that ended after the
-- branch's newest commit counts for none. One row per commit and branch holding it with at
-- least one session: its sessions, their model calls and cost in US dollars (null when a call
-- has no price).
with branch_commits as (
  select project, unnest(string_to_array(branches, ',')) as git_branch, "commit", authored_at, subject
  from git_commits
),
on_branch as (
  select *, lag(authored_at) over (partition by project, git_branch order by authored_at, "commit") as previous_at
  from branch_commits
),
attributed as (
  select o.project, o.git_branch, o."commit", o.authored_at, o.subject, count(*) as sessions,
         sum(s.calls) as calls,
         case when count(s.cost_usd) = count(case when s.calls > 0 then 1 end)
              then cast(round(coalesce(sum(cast(s.cost_usd as decimal(38, 12))), 0), 6) as double) end
           as cost_usd
  from on_branch o
  join sessions s on s.project = o.project and s.git_branch = o.git_branch
    and s.ended_at <= o.authored_at and (o.previous_at is null or s.ended_at > o.previous_at)
  group by o.project, o.git_branch, o."commit", o.authored_at, o.subject
)
select project, git_branch, "commit", cast(authored_at as timestamptz) as authored_at, subject, sessions,
       calls, cost_usd
from attributed
order by project, git_branch, authored_at, "commit"
