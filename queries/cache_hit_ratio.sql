-- Cache hit ratio by model: the share of each model's input tokens that were read from the
-- prompt cache, from rupu's usage. In rupu, cached_tokens are part of input_tokens, so the
-- ratio is cached_tokens / input_tokens (null for a model with no input tokens).
select model, count(*) as calls,
       sum(input_tokens) as input_tokens, sum(cached_tokens) as cached_tokens,
       round(cast(sum(cached_tokens) as double) / nullif(sum(input_tokens), 0), 4) as cache_hit_ratio
from rupu.usage
group by model
order by model
