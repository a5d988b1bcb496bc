-- Denied tools by tool and reason: tool calls the permission check refused, from both places
-- rupu records one: a blocked tool_audit (written for MCP catalog tools, often with no decision)
-- and a tool_result whose error is a denial (a built-in tool the decider refused:
-- permission_denied; an MCP tool in readonly mode: permission denied; a tool narrowed out or
-- unknown: unknown tool: X; a denied:... decision). A call with both counts once. reason is the
-- audit's decision, else the result's error, else the audit's reason; with denials and runs.
with calls as (
  select file, line, call_id, tool from rupu.tool_call
), denied_results as (
  select r.file, r.run_id, c.tool, r.call_id, r.error
  from rupu.tool_result r
  join calls c on c.file = r.file and c.call_id = r.call_id
  where r.error in ('permission_denied', 'permission denied')
     or r.error like 'unknown tool: %'
     or r.error like 'denied:%'
), blocked as (
  -- An audit follows its call: its call is the last call of the same tool above it.
  select a.file, a.line, a.run_id, a.tool, a.decision, a.reason, max(c.line) as call_line
  from rupu.tool_audit a
  left join calls c on c.file = a.file and c.tool = a.tool and c.line < a.line
  where a.blocked
  group by a.file, a.line, a.run_id, a.tool, a.decision, a.reason
), blocked_calls as (
  select b.file, b.run_id, b.tool, b.decision, b.reason, c.call_id
  from blocked b
  left join calls c on c.file = b.file and c.line = b.call_line
), denials as (
  select coalesce(b.run_id, d.run_id) as run_id, coalesce(b.tool, d.tool) as tool,
         coalesce(b.decision, d.error, b.reason) as reason
  from blocked_calls b
  full join denied_results d on d.file = b.file and d.call_id = b.call_id
)
select tool, reason, count(*) as denials, count(distinct run_id) as runs
from denials
group by tool, reason
order by denials desc, tool, reason
