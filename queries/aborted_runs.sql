-- Aborted runs, newest first, with their cause: a run whose transcript has no run_complete
-- (cause no_run_complete: it crashed, was killed, or is still being written; completed false)
-- kept apart from one whose run_complete says aborted (cause operator_stop, paused, or what
-- else its error says; completed true); with how far each got: turns, tool calls and tokens.
select run_id, agent, model, mode, started_at,
       case when not completed then 'no_run_complete' else coalesce(error, 'aborted') end as cause,
       completed, turns, tool_calls, input_tokens, output_tokens, archived, file
from rupu.runs
where status = 'aborted'
order by started_at desc, run_id
