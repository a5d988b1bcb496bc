//! From what inference learned to tables: each format's tables and columns ([`event_table`]), and
//! the corpus: the files of every format, their events by type, and the problems met reading them
//! ([`corpus`], [`file_events`]).

pub mod corpus;
pub mod event_table;
pub(crate) mod file_events;
#[cfg(feature = "testing")]
pub mod reference;
