//! Text for people: what comes from the data or the file system made safe to show ([`escape`]),
//! sizes as people write them ([`size`]), lists in words ([`words`]), a settings file a person
//! names read safely ([`settings_file`]), and the status line of a long task ([`status_line`]).

pub mod escape;
pub(crate) mod number;
pub mod settings_file;
pub(crate) mod size;
pub(crate) mod status_line;
pub(crate) mod words;
