-- Failed web searches (reeval): every web search an agent made that failed (ok false), newest
-- first, with its query and where it happened. An attempt kept both under .reeval/runs and in
-- evals/.history is listed once.
select run_id, eval, cell, attempt, turn, ts, query
from reeval.web_search w
where not ok
  and (not history or not exists (
    select 1 from reeval.files f
    where not f.history and f.run_id = w.run_id and f.eval = w.eval
      and f.cell = w.cell and f.attempt = w.attempt))
order by ts desc, run_id, eval, cell, attempt
