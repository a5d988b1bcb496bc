//! Text for people: what comes from the data or the file system, made safe to show.

pub mod escape;
