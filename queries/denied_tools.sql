-- Denied tools by tool and decision: tool calls the permission check refused (tool_audit
-- with blocked true), how many times each tool was refused for each decision (denied:readonly,
-- denied:not_granted, ...), and in how many runs.
select tool, decision, count(*) as denials, count(distinct run_id) as runs
from rupu.tool_audit
where blocked
group by tool, decision
order by denials desc, tool, decision
