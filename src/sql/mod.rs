//! The SQL session over a corpus: its schemas, tables and views ([`session`]), the memory a
//! statement may hold ([`memory`]), the `prices` table ([`prices`]), the canned queries
//! ([`queries`]) and the days and time zone of the spend reports among them ([`reports`]).

pub(crate) mod blocks;
pub(crate) mod git_commits;
pub mod memory;
pub(crate) mod normalized;
pub(crate) mod planned_on_use;
pub(crate) mod prices;
pub mod queries;
pub mod reports;
pub(crate) mod repository_root;
pub mod session;
pub(crate) mod session_root;
