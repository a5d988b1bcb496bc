-- Spend by model and day: what each model's calls cost each day, in US dollars, from rupu's
-- usage priced by call_cost at the session's prices (the built-in list, with --prices FILE /
-- TXQ_PRICES laid over it; docs/prices.md). day is the run's start date (UTC), since rupu
-- writes no time on a usage line. In rupu, cached_tokens are part of input_tokens and
-- cache_write_tokens are not: a call's prompt is input_tokens + cache_write_tokens.
-- long_context_calls counts the calls whose prompt is over their model's long_context_above in
-- the prices table, which call_cost prices whole at the long-context prices. A model with no
-- price, or cache reads or writes of a model whose row in prices gives no price for them, costs
-- null, never 0.
with run_days as (
  select file, cast(min(started_at) as date) as day from rupu.run_start group by file
), usage as (
  select d.day, u.model, u.input_tokens, u.cached_tokens, u.output_tokens,
         coalesce(u.cache_write_tokens, 0) as cache_write_tokens
  from rupu.usage u
  join run_days d on d.file = u.file
), costed as (
  select u.day, u.model, u.input_tokens, u.cached_tokens, u.output_tokens, u.cache_write_tokens,
         coalesce(u.input_tokens + u.cache_write_tokens > p.long_context_above, false) as long_context,
         case when (u.cached_tokens > 0 and p.model is not null and p.cached_input is null)
                or (u.cache_write_tokens > 0 and p.model is not null and p.cache_write is null) then null
              else call_cost(u.model, u.input_tokens + u.cache_write_tokens, u.cached_tokens,
                             u.cache_write_tokens, u.output_tokens)
         end as cost_usd
  from usage u
  left join prices p on p.model = u.model
)
select day, model, count(*) as calls,
       sum(input_tokens) as input_tokens, sum(cached_tokens) as cached_tokens,
       sum(cache_write_tokens) as cache_write_tokens, sum(output_tokens) as output_tokens,
       count(*) filter (where long_context) as long_context_calls,
       case when count(cost_usd) = count(*) then round(sum(cost_usd), 6) end as cost_usd
from costed
group by day, model
order by day, model
