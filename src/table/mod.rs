//! From what inference learned to tables. In: the files found and their summaries. Out: the
//! corpus ([`corpus`]): each format's files, its tables and their columns ([`event_table`]), each
//! file's events by type ([`file_events`]), and the log of problems reads meet. With the `testing`
//! feature, the reference of every table rendered for docs/tables.md (`reference`).

pub mod corpus;
pub mod event_table;
pub(crate) mod file_events;
#[cfg(feature = "testing")]
pub mod reference;
