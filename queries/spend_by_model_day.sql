-- Spend by model and day: what each model's calls cost each day, in US dollars, from rupu's
-- usage priced with the prices table (the built-in list, with --prices FILE / TXQ_PRICES laid
-- over it). day is the run's start date (UTC), since rupu writes no time on a usage line. In
-- rupu, cached_tokens are part of input_tokens: they are priced at cached_input and only the
-- rest at input; cache_write_tokens are not part of input_tokens and are priced at cache_write
-- on top. A call whose prompt (input_tokens + cache_write_tokens) is over the model's
-- long_context_above is priced whole at its long_* prices (an empty one is the short tier's);
-- long_context_calls counts them. A model with no price, or tokens of a kind it has no price
-- for (cache reads or writes), costs null, never 0.
with run_days as (
  select file, cast(min(started_at) as date) as day from rupu.run_start group by file
), calls as (
  select d.day, u.model, u.input_tokens, u.cached_tokens, u.output_tokens,
         coalesce(u.cache_write_tokens, 0) as cache_write_tokens,
         coalesce(p.long_context_above is not null
                  and u.input_tokens + coalesce(u.cache_write_tokens, 0) > p.long_context_above, false)
           as long_context,
         p.input as p_input, p.output as p_output, p.cached_input as p_cached, p.cache_write as p_write,
         p.long_input, p.long_output, p.long_cached_input, p.long_cache_write
  from rupu.usage u
  join run_days d on d.file = u.file
  left join prices p on p.model = u.model
), priced as (
  select day, model, input_tokens, cached_tokens, output_tokens, cache_write_tokens, long_context,
         case when long_context then coalesce(long_input, p_input) else p_input end as input_price,
         case when long_context then coalesce(long_output, p_output) else p_output end as output_price,
         case when long_context then coalesce(long_cached_input, p_cached) else p_cached end as cached_price,
         case when long_context then coalesce(long_cache_write, p_write) else p_write end as write_price
  from calls
), costed as (
  select day, model, input_tokens, cached_tokens, output_tokens, cache_write_tokens, long_context,
         ((input_tokens - cached_tokens) * input_price
           + case when cached_tokens = 0 then 0.0 else cached_tokens * cached_price end
           + output_tokens * output_price
           + case when cache_write_tokens = 0 then 0.0 else cache_write_tokens * write_price end) / 1e6
           as cost_usd
  from priced
)
select day, model, count(*) as calls,
       sum(input_tokens) as input_tokens, sum(cached_tokens) as cached_tokens,
       sum(cache_write_tokens) as cache_write_tokens, sum(output_tokens) as output_tokens,
       count(*) filter (where long_context) as long_context_calls,
       case when count(cost_usd) = count(*) then round(sum(cost_usd), 6) end as cost_usd
from costed
group by day, model
order by day, model
