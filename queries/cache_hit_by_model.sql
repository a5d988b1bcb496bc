-- Cache hit ratio by harness and model across every harness: the share of each model's input
-- tokens (the normalized calls table's, cache reads and writes included) that were read from
-- the prompt cache, and the share written to it; null for a model with no input tokens.

-- A spend report (docs/export.md#spend-reports): `period` names the first and last day (of the
-- session's time zone, UTC when unset) of the calls counted, both included (null: no bound).
-- Calls with no time are counted only when no bound is set.
with period as (select cast(null as date) as first_day, cast(null as date) as last_day),
dated as (select cast(cast(ts as timestamptz) as date) as day, * from calls)
select harness, model, count(*) as calls,
       sum(input_tokens) as input_tokens, sum(cache_read_tokens) as cache_read_tokens,
       sum(cache_write_tokens) as cache_write_tokens,
       round(cast(sum(cache_read_tokens) as double) / nullif(sum(input_tokens), 0), 4) as cache_hit_ratio,
       round(cast(sum(cache_write_tokens) as double) / nullif(sum(input_tokens), 0), 4) as cache_write_ratio
from dated cross join period
where (first_day is null or day >= first_day) and (last_day is null or day <= last_day)
group by harness, model
order by harness, model
