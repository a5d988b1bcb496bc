-- What the corpus holds, per format and in all (format `all`): its transcripts, the files of
-- its naming, their bytes, the damaged lines skipped (listed in each schema's errors table),
-- the sessions of the normalized sessions table, and the first and last time they cover.
with files as (
  select 'rupu' as format, transcript, bytes, damaged_lines from rupu.files
  union all select 'rupu_netflow', transcript, bytes, damaged_lines from rupu_netflow.files
  union all select 'reeval', transcript, bytes, damaged_lines from reeval.files
  union all select 'claude', transcript, bytes, damaged_lines from claude.files
  union all select 'codex', transcript, bytes, damaged_lines from codex.files
  union all select 'gemini', transcript, bytes, damaged_lines from gemini.files
), per_format as (
  select format, count(*) filter (where transcript) as transcripts, count(*) as files,
         coalesce(sum(bytes), 0) as bytes, coalesce(sum(damaged_lines), 0) as damaged_lines
  from files group by format
), spans as (
  select harness as format, count(*) as sessions, min(cast(started_at as timestamptz)) as first_time,
         max(cast(coalesce(ended_at, started_at) as timestamptz)) as last_time
  from sessions group by harness
), joined as (
  select p.format as name, p.transcripts, p.files, p.bytes, p.damaged_lines, s.sessions,
         s.first_time, s.last_time
  from per_format p left join spans s on s.format = p.format
)
select coalesce(name, 'all') as format, sum(transcripts) as transcripts, sum(files) as files,
       sum(bytes) as bytes, sum(damaged_lines) as damaged_lines,
       coalesce(sum(sessions), 0) as sessions, min(first_time) as first_time,
       max(last_time) as last_time
from joined
group by rollup(name)
order by name nulls last
