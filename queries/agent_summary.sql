-- Per-agent summary: for each rupu agent, its runs and how they ended (ok, error, aborted; of
-- the aborted, unfinished ones have no run_complete: crashed or still running), its turns, tool
-- calls and tokens (cached_tokens are part of input_tokens), and when it first and last started
-- a run.
select agent, count(*) as runs,
       count(*) filter (where status = 'ok') as ok,
       count(*) filter (where status = 'error') as error,
       count(*) filter (where status = 'aborted') as aborted,
       count(*) filter (where not completed) as unfinished,
       sum(turns) as turns, sum(tool_calls) as tool_calls,
       sum(input_tokens) as input_tokens, sum(cached_tokens) as cached_tokens,
       sum(output_tokens) as output_tokens,
       min(started_at) as first_run, max(started_at) as last_run
from rupu.runs
group by agent
order by agent
