-- Reeval turn durations by eval and cell: how long turns took (turn-end durationMs, turns that
-- reported one): the median (p50), the 95th percentile (p95, interpolated) and the longest, in
-- milliseconds. An attempt kept both under .reeval/runs and in evals/.history counts once.
select eval, cell, count(*) as turns,
       round(percentile_cont(0.5) within group (order by cast(duration_ms as double)), 1) as p50_ms,
       round(percentile_cont(0.95) within group (order by cast(duration_ms as double)), 1) as p95_ms,
       max(duration_ms) as max_ms
from reeval.turn_end t
where duration_ms is not null
  and (not history or not exists (
    select 1 from reeval.files f
    where not f.history and f.run_id = t.run_id and f.eval = t.eval
      and f.cell = t.cell and f.attempt = t.attempt))
group by eval, cell
order by eval, cell
