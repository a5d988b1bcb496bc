-- Weekly spend across every harness, as ccusage's weekly report: per UTC week (its Monday) and
-- model, the calls of the normalized calls table (each response counted once), their input
-- tokens (cache included), output tokens and cost in US dollars (null when a model of the week
-- has no price). Calls with no time are left out.
select cast(date_trunc('week', ts) as date) as week, harness, model, count(*) as calls,
       sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens,
       case when count(cost_usd) = count(*) then round(sum(cost_usd), 6) end as cost_usd
from calls
where ts is not null
group by 1, 2, 3
order by 1, 2, 3
