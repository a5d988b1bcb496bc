-- Models without a price: the models of the normalized calls table with calls that call_cost
-- could not price (no entry in the prices table with an input and an output price, whatever
-- name matching tried), per harness, with how many such calls; --prices FILE lays prices over
-- the built-in list.
select harness, model, count(*) as unpriced_calls
from calls
where cost_usd is null
group by harness, model
order by harness, model
