-- Slowest tools: how long each tool's calls took, from tool_result.duration_ms joined to its
-- tool_call by call_id within the same transcript: the median (p50), the 95th percentile (p95,
-- interpolated between the two nearest calls) and the slowest call, in milliseconds.
select c.tool, count(*) as calls,
       round(percentile_cont(0.5) within group (order by cast(r.duration_ms as double)), 1) as p50_ms,
       round(percentile_cont(0.95) within group (order by cast(r.duration_ms as double)), 1) as p95_ms,
       max(r.duration_ms) as max_ms
from rupu.tool_call c
join rupu.tool_result r on r.file = c.file and r.call_id = c.call_id
where r.duration_ms is not null
group by c.tool
order by p95_ms desc, c.tool
