-- Spend by machine: for each machine (the --label of the place a transcript was found in, or
-- [sources] of the config file, else this machine's name) and harness, its sessions, calls,
-- tokens and cost in US dollars (null when a call has no price), and its first and last call.
-- Another machine's copy of a transcript (the same path under its place, the same bytes) is read
-- once, on the first machine: the total over machines counts each call once.
select machine, harness, count(distinct session_id) as sessions, count(*) as calls,
       sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens,
       case when count(cost_usd) = count(*) then round(sum(cost_usd), 6) end as cost_usd,
       min(ts) as first_call, max(ts) as last_call
from calls
group by machine, harness
order by machine, harness
