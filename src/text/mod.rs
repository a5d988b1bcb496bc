//! Text for people: what comes from the data or the file system, made safe to show, and sizes
//! as people write them.

pub mod escape;
pub mod settings_file;
pub(crate) mod size;
pub(crate) mod words;
