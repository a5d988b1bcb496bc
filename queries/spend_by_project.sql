-- Spend by project across every harness: the sessions of the normalized sessions table that
-- made model calls, grouped by project (the last two components of the session's working
-- directory, `cwd`, as ccusage names a project: `/home/ana/src/my_app` is `src/my_app`; null
-- for a session with no working directory, as rupu's), with the harnesses, sessions, calls,
-- input tokens (cache included), output tokens and cost in US dollars (null when a call of the
-- project has no price), most expensive first.
with projects as (
  select nullif(regexp_replace(rtrim(cwd, '/\\'), '^.*[/\\]([^/\\]+[/\\][^/\\]+)$', '${1}'), '') as project,
         *
  from sessions
  where calls > 0
)
select project, array_to_string(array_sort(array_agg(distinct harness)), ', ') as harnesses,
       count(*) as sessions, sum(calls) as calls, sum(input_tokens) as input_tokens,
       sum(output_tokens) as output_tokens,
       -- summed as decimals: exact, whatever order the sessions are added in
       case when count(cost_usd) = count(*)
            then cast(round(sum(cast(cost_usd as decimal(38, 12))), 6) as double) end as cost_usd
from projects
group by project
order by cost_usd desc nulls last, project nulls last
