-- Models without a price: the models of the normalized calls table with calls that call_cost
-- could not price (no price in the prices table, or tokens of a kind it has no price for),
-- per harness, with how many such calls; --prices FILE lays prices over the built-in list.
select harness, model, count(*) as unpriced_calls
from calls
where cost_usd is null
group by harness, model
order by harness, model
