-- Daily spend across every harness, as ccusage's daily report: per UTC day and model, the calls
-- of the normalized calls table (each response counted once), their input tokens (cache reads
-- and writes included), cache reads, cache writes, output tokens (reasoning included) and cost
-- in US dollars (null when a model of the day has no price). Calls with no time are left out.
select cast(ts as date) as day, harness, model, count(*) as calls,
       sum(input_tokens) as input_tokens, sum(cache_read_tokens) as cache_read_tokens,
       sum(cache_write_tokens) as cache_write_tokens, sum(output_tokens) as output_tokens,
       case when count(cost_usd) = count(*) then round(sum(cost_usd), 6) end as cost_usd
from calls
where ts is not null
group by 1, 2, 3
order by 1, 2, 3
