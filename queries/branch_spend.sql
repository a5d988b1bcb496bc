-- Spend by project, git branch and harness: for each, its sessions, their model calls, their
-- cost in US dollars (null when a call has no price) and when the first of them started and the
-- last ended. A session's project is its working directory's repository root on this machine
-- (else the directory), its branch the one checked out when it started, as the harness wrote it
-- (null where the harness writes none).
select project, git_branch, harness, count(*) as sessions, sum(calls) as calls,
       -- summed as decimals: exact, whatever order the sessions are added in
       case when count(cost_usd) = count(case when calls > 0 then 1 end)
            then cast(round(coalesce(sum(cast(cost_usd as decimal(38, 12))), 0), 6) as double) end
         as cost_usd,
       cast(min(started_at) as timestamptz) as first_at, cast(max(ended_at) as timestamptz) as last_at
from sessions
group by project, git_branch, harness
order by cost_usd desc nulls last, project, git_branch nulls last, harness
