-- Aborted runs: runs whose transcript has no run_complete (killed, crashed, or still being
-- written), newest first, with how far each got: turns, tool calls and tokens.
select run_id, agent, model, mode, started_at, turns, tool_calls,
       input_tokens, output_tokens, archived, file
from rupu.runs
where status = 'aborted'
order by started_at desc, run_id
