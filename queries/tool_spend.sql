-- Spend by tool and by MCP server: for each harness's tool, its calls, the calls that failed
-- (ok false), its cost in US dollars (each call's cost_usd: its share of the response that asked
-- for it, split evenly among that response's tool calls, an estimate; summed over the calls
-- whose response has a price, null when none has) and the UTF-8 bytes its results put back into
-- the context. Then one subtotal row per MCP server, harness and tool null. The bytes are paid
-- as input by the calls after them, which stay the model's (docs/harnesses.md#the-cost-of-a-tool-call).
with rows as (
  select harness, mcp_server, tool, count(*) as calls, count(*) filter (where not ok) as failures,
         sum(cost_usd) as cost_usd, sum(result_bytes) as result_bytes
  from tool_calls
  group by harness, mcp_server, tool
  union all
  select cast(null as varchar) as harness, mcp_server, cast(null as varchar) as tool, count(*) as calls,
         count(*) filter (where not ok) as failures, sum(cost_usd) as cost_usd,
         sum(result_bytes) as result_bytes
  from tool_calls
  where mcp_server is not null
  group by mcp_server
)
select harness, mcp_server, tool, calls, failures, round(cost_usd, 9) as cost_usd, result_bytes
from rows
order by cost_usd desc nulls last, mcp_server nulls last, harness nulls last, tool nulls last
