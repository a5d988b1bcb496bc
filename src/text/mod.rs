//! Text for people: what comes from the data or the file system, made safe to show, sizes as
//! people write them, and the status line of a long task.

pub mod escape;
pub mod settings_file;
pub(crate) mod size;
pub(crate) mod status_line;
pub(crate) mod words;
