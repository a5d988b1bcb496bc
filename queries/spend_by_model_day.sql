-- Spend by model and day: what each model's calls cost each day, in US dollars, from rupu's
-- usage priced with the prices table (the built-in list, or --prices FILE / TXQ_PRICES).
-- day is the run's start date (UTC), since rupu writes no time on a usage line. In rupu,
-- cached_tokens are part of input_tokens: they are priced at cached_input and only the rest
-- at input; cache_write_tokens are not part of input_tokens and are priced at cache_write on
-- top. A model with no price (or with cache writes and no cache_write price) costs null, never 0.
with run_days as (
  select file, cast(min(started_at) as date) as day from rupu.run_start group by file
), priced as (
  select d.day, u.model, u.input_tokens, u.cached_tokens, u.output_tokens,
         coalesce(u.cache_write_tokens, 0) as cache_write_tokens,
         ((u.input_tokens - u.cached_tokens) * p.input
           + u.cached_tokens * p.cached_input
           + u.output_tokens * p.output
           + case when coalesce(u.cache_write_tokens, 0) = 0 then 0.0
                  else u.cache_write_tokens * p.cache_write end) / 1e6 as cost_usd
  from rupu.usage u
  join run_days d on d.file = u.file
  left join prices p on p.model = u.model
)
select day, model, count(*) as calls,
       sum(input_tokens) as input_tokens, sum(cached_tokens) as cached_tokens,
       sum(cache_write_tokens) as cache_write_tokens, sum(output_tokens) as output_tokens,
       case when count(cost_usd) = count(*) then round(sum(cost_usd), 6) end as cost_usd
from priced
group by day, model
order by day, model
