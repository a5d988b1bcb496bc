-- Reeval tool failure rate by eval and cell: the attempts, their tool calls (events of type
-- tool) and the share of those that failed (ok false). An attempt kept both under .reeval/runs
-- and in evals/.history counts once.
with kept as (
  select * from reeval.attempts a
  where not a.history or not exists (
    select 1 from reeval.attempts b
    where not b.history and b.run_id = a.run_id and b.eval = a.eval
      and b.cell = a.cell and b.attempt = a.attempt)
)
select eval, cell, count(*) as attempts,
       sum(tool_calls) as tool_calls, sum(tool_failures) as tool_failures,
       round(cast(sum(tool_failures) as double) / nullif(sum(tool_calls), 0), 4) as failure_rate
from kept
group by eval, cell
order by eval, cell
