-- Failing commands: commands the agents ran (command_run) that exited non-zero, by command
-- line and exit code, with how many times each failed and in how many runs.
select array_to_string(argv, ' ') as command, exit_code, count(*) as failures,
       count(distinct run_id) as runs
from rupu.command_run
where exit_code <> 0
group by 1, 2
order by failures desc, command, exit_code
