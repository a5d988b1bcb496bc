-- Tool failures across every harness: per harness and tool, the calls of the normalized
-- tool_calls table, how many failed (ok false: an error result, a non-zero exit, a status
-- other than success, as each harness says; docs/harnesses.md) and the share that failed (null
-- when no call says whether it did), most failures first.
select harness, tool, count(*) as calls, count(*) filter (where not ok) as failures,
       round(cast(count(*) filter (where not ok) as double) / nullif(count(ok), 0), 4) as failure_rate
from tool_calls
group by harness, tool
order by failures desc, failure_rate desc nulls last, harness, tool
