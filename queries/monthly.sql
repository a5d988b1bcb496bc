-- Monthly spend across every harness, as ccusage's monthly report: per UTC month (its first
-- day) and model, the calls of the normalized calls table (each response counted once), their
-- input tokens (cache included), output tokens and cost in US dollars (null when a model of the
-- month has no price). Calls with no time are left out.
select date_trunc('month', ts) as month, harness, model, count(*) as calls,
       sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens,
       case when count(cost_usd) = count(*) then round(sum(cost_usd), 6) end as cost_usd
from calls
where ts is not null
group by 1, 2, 3
order by 1, 2, 3
