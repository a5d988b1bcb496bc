-- Network egress by host and outcome: the outbound connections rupu recorded, per host and
-- outcome (ok, http_error, transport_error, timeout), with the bytes sent and received. A flow
-- is a transcript's net_flow or a netflow ledger's flow line (one row per flow id). A streamed
-- call's body ends after its flow is written: its final bytes_in comes from the ledger's
-- complete line. A flow with body_complete false and no complete line is unconfirmed: its
-- bytes_in (if any) is only declared, counted in unconfirmed_bytes_in, and the flow in
-- unconfirmed_flows.
with flows as (
  select id, host, outcome, bytes_out, bytes_in, body_complete from rupu.net_flow
  union all
  select id, host, outcome, bytes_out, bytes_in, body_complete from rupu_netflow.flow l
  where l.id is null or l.id not in (select id from rupu.net_flow where id is not null)
), completes as (
  select id, max(bytes_in) as bytes_in from rupu_netflow.complete where id is not null group by id
), final as (
  select f.host, f.outcome, f.bytes_out,
         case when c.id is not null then c.bytes_in else f.bytes_in end as bytes_in,
         f.body_complete or c.id is not null as confirmed
  from flows f
  left join completes c on c.id = f.id
)
select host, outcome, count(*) as flows,
       coalesce(sum(bytes_out), 0) as bytes_out,
       coalesce(sum(bytes_in), 0) as bytes_in,
       coalesce(sum(bytes_in) filter (where not confirmed), 0) as unconfirmed_bytes_in,
       count(*) filter (where not confirmed) as unconfirmed_flows
from final
group by host, outcome
order by host, outcome
