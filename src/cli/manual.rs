//! What is written from the command line's definition alone ([`super::args::command`]): the
//! shell completions (clap_complete) and the manual pages (clap_mangen), so that help,
//! completions and manual never drift apart.

use super::args::command;
use crate::error::Error;
use std::io::Write;
use std::path::Path;

/// Writes the completion script of `shell` to `out`.
pub(crate) fn completions(shell: clap_complete::Shell, out: &mut dyn Write) -> Result<(), Error> {
    let mut cmd = command();
    let mut buffer = Vec::new();
    clap_complete::generate(shell, &mut cmd, "txq", &mut buffer);
    out.write_all(&buffer).and_then(|()| out.flush()).map_err(Error::Output)
}

/// Writes the manual page of txq, or of its command `name` (`export`), to `out`.
pub(crate) fn page(name: Option<&str>, out: &mut dyn Write) -> Result<(), Error> {
    let mut cmd = command().disable_help_subcommand(true);
    cmd.build();
    let cmd = match name {
        None => cmd,
        Some(name) => {
            let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
            let Some(sub) = cmd.find_subcommand(name) else {
                return Err(Error::Usage(format!(
                    "no command {name:?} has a manual page; txq's commands are {}",
                    crate::text::words::listed(&names)
                )));
            };
            sub.clone()
        }
    };
    let mut buffer = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut buffer).map_err(Error::Output)?;
    out.write_all(&buffer).and_then(|()| out.flush()).map_err(Error::Output)
}

/// Writes every manual page into `dir` (made if missing): `txq.1` and `txq-<command>.1` for
/// each command, and names each on `out`.
pub(crate) fn pages_into(dir: &Path, out: &mut dyn Write) -> Result<(), Error> {
    let failed = |e: std::io::Error| Error::Usage(format!("--out {}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(failed)?;
    clap_mangen::generate_to(command(), dir).map_err(failed)?;
    let mut written: Vec<String> = std::fs::read_dir(dir)
        .map_err(failed)?
        .filter_map(|entry| entry.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|name| (name == "txq.1" || name.starts_with("txq-")) && name.ends_with(".1"))
        .collect();
    written.sort();
    for name in written {
        writeln!(out, "{}", dir.join(name).display()).map_err(Error::Output)?;
    }
    out.flush().map_err(Error::Output)
}
