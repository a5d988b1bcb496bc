-- Network egress by host and outcome: the outbound connections rupu recorded (net_flow), per
-- host and outcome (ok, http_error, transport_error, timeout), with the bytes sent and received.
-- bytes_in is only declared while body_complete is false; unconfirmed_bytes_in is that part.
select host, outcome, count(*) as flows,
       coalesce(sum(bytes_out), 0) as bytes_out,
       coalesce(sum(bytes_in), 0) as bytes_in,
       coalesce(sum(bytes_in) filter (where not body_complete), 0) as unconfirmed_bytes_in
from rupu.net_flow
group by host, outcome
order by host, outcome
