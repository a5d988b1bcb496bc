//! The SQL session over a corpus: its schemas, tables and views ([`session`]), the memory a
//! statement may hold ([`memory`]), the `prices` table ([`prices`]) and the canned queries
//! ([`queries`]).

pub mod memory;
pub(crate) mod normalized;
pub(crate) mod prices;
pub mod queries;
pub mod session;
