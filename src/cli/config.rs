//! The settings people repeat, in layers: the config file (`$XDG_CONFIG_HOME/txq/config.toml`,
//! else `~/.config/txq/config.toml`, or `$TXQ_CONFIG`), then the environment (`TXQ_FORMAT`,
//! `TXQ_MAXROWS`, `TXQ_PRICES`, `TXQ_MEMORY_LIMIT`), then the flags, each overriding the one
//! before; what a layer says wrong is a usage error naming the layer.

use super::args::{Args, Command, Label, machine_name, parse_memory_limit};
use super::print::OutputFormat;
use crate::error::Error;
use clap::ValueEnum;
use clap::parser::ValueSource;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The variable that names another config file (empty: none is read).
pub const CONFIG_ENV: &str = "TXQ_CONFIG";

/// What a config file may set; any other key is an error, so that a misspelt one is seen.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    /// As `--format`.
    format: Option<String>,
    /// As `--maxrows`.
    maxrows: Option<usize>,
    /// The paths read when the command line gives none, instead of the default places.
    paths: Option<Vec<PathBuf>>,
    /// As `--prices`.
    prices: Option<PathBuf>,
    /// As `--memory-limit`: a size (`2G`) or a number of bytes.
    memory_limit: Option<MemoryLimit>,
    /// As `--timezone` of the spend reports and `txq report`: an IANA name or an offset.
    timezone: Option<String>,
    /// Other machines' places, each under its machine's name (a path or a list of them): read
    /// when the command line gives no path, as `--label NAME=PATH`; a path given under one of
    /// them is that machine's. In the order written (the first machine keeps a copy two hold).
    sources: Option<toml::Table>,
}

/// The places of `machine` in `[sources]`: a path, or a list of them.
fn places_of(machine: &str, value: &toml::Value) -> Result<Vec<PathBuf>, String> {
    let not_a_path = || format!("{machine}: not a path or a list of paths: {value}");
    match value {
        toml::Value::String(place) => Ok(vec![PathBuf::from(place)]),
        toml::Value::Array(places) => {
            places.iter().map(|place| place.as_str().map(PathBuf::from).ok_or_else(not_a_path)).collect()
        }
        _ => Err(not_a_path()),
    }
}

/// A memory limit as a config file may spell it.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum MemoryLimit {
    Bytes(u64),
    Size(String),
}

/// The config file txq reads, if any: `$TXQ_CONFIG` when set (empty: none), else
/// `$XDG_CONFIG_HOME/txq/config.toml`, else `~/.config/txq/config.toml`.
pub fn config_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(CONFIG_ENV) {
        return (!path.is_empty()).then(|| PathBuf::from(path));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| dirs::home_dir().map(|home| home.join(".config")))?;
    Some(base.join("txq").join("config.toml"))
}

/// The most a config file may hold: 1 MiB.
const CONFIG_LIMIT: u64 = 1 << 20;

impl Config {
    /// The config file at `path`; none when there is no file there (a file named by
    /// `$TXQ_CONFIG` must be there).
    fn read(path: &Path, named: bool) -> Result<Config, Error> {
        use crate::text::settings_file::{Unreadable, read};
        let text = match read(path, CONFIG_LIMIT) {
            Ok(text) => text,
            Err(Unreadable::Io(e)) if e.kind() == std::io::ErrorKind::NotFound && !named => {
                return Ok(Config::default());
            }
            Err(e) => return Err(Error::Usage(format!("config file {}: {e}", path.display()))),
        };
        toml::from_str(&text).map_err(|e| {
            Error::Usage(format!("config file {}: {}", path.display(), e.to_string().trim_end()))
        })
    }
}

/// Lays the config file and the environment under the flags of `args`: a setting the command
/// line gave is kept; else the environment's; else the config file's.
pub fn apply(args: &mut Args, matches: &clap::ArgMatches) -> Result<(), Error> {
    // What only writes text from the command line's definition reads no settings.
    if matches!(args.command, Some(Command::Completions { .. } | Command::Man { .. })) {
        return Ok(());
    }
    let (config, path) = match config_path() {
        Some(path) => (Config::read(&path, std::env::var_os(CONFIG_ENV).is_some())?, path),
        None => (Config::default(), PathBuf::new()),
    };
    let from_file =
        |key: &str, why: String| Error::Usage(format!("config file {}: {key}: {why}", path.display()));
    let from_env = |name: &str, why: String| Error::Usage(format!("{name}: {why}"));
    let given = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());

    if !given("format") && !given("json") {
        if let Some(value) = env("TXQ_FORMAT") {
            args.format = parse_format(&value).map_err(|why| from_env("TXQ_FORMAT", why))?;
        } else if let Some(value) = &config.format {
            args.format = parse_format(value).map_err(|why| from_file("format", why))?;
        }
    }
    if args.maxrows.is_none() {
        if let Some(value) = env("TXQ_MAXROWS") {
            let n = value
                .trim()
                .parse()
                .map_err(|_| from_env("TXQ_MAXROWS", format!("not a number: {value:?}")))?;
            args.maxrows = Some(n);
        } else {
            args.maxrows = config.maxrows;
        }
    }
    if args.memory_limit.is_none() {
        if let Some(value) = env("TXQ_MEMORY_LIMIT") {
            args.memory_limit =
                Some(parse_memory_limit(value.trim()).map_err(|why| from_env("TXQ_MEMORY_LIMIT", why))?);
        } else if let Some(limit) = &config.memory_limit {
            let bytes = match limit {
                MemoryLimit::Bytes(bytes) => parse_memory_limit(&bytes.to_string()),
                MemoryLimit::Size(size) => parse_memory_limit(size),
            };
            args.memory_limit = Some(bytes.map_err(|why| from_file("memory_limit", why))?);
        }
    }
    // TXQ_PRICES is read where the prices are chosen, over the config file's.
    if args.prices.is_none() && env(crate::sql::prices::ENV).is_none() {
        args.prices = config.prices.as_deref().map(expand_home);
    }
    if let Some(zone) = &config.timezone
        && let Some(slot @ None) = args.command.as_mut().and_then(Command::time_zone_mut)
    {
        let zone =
            crate::sql::reports::parse_time_zone(zone.trim()).map_err(|why| from_file("timezone", why))?;
        *slot = Some(zone);
    }
    let paths_given = !args.paths.is_empty()
        || matches!(&args.command,
            Some(Command::Shell { paths } | Command::Export { paths, .. } | Command::Query { paths, .. })
                if !paths.is_empty())
        || args.command.as_ref().and_then(Command::spend_flags).is_some_and(|f| !f.paths.is_empty());
    if !paths_given && let Some(paths) = &config.paths {
        args.paths = paths.iter().map(|p| expand_home(p)).collect();
    }
    for (machine, places) in config.sources.iter().flatten() {
        let places = places_of(machine, places).map_err(|why| from_file("sources", why))?;
        let machine = machine_name(machine).map_err(|why| from_file("sources", why))?;
        for place in &places {
            args.label.push(Label {
                machine: machine.clone(),
                place: expand_home(place),
                always: !paths_given,
            });
        }
    }
    Ok(())
}

/// An output format as `--format` spells it.
fn parse_format(value: &str) -> Result<OutputFormat, String> {
    OutputFormat::from_str(value.trim(), true).map_err(|_| {
        let names: Vec<String> = OutputFormat::value_variants()
            .iter()
            .filter_map(|f| f.to_possible_value().map(|v| v.get_name().to_string()))
            .collect();
        format!("not an output format: {value:?} (one of {})", crate::text::words::listed(&names))
    })
}

/// `~/x` as the home's `x`; any other path as it is (a relative one, from the working directory,
/// as on the command line).
fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), dirs::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_file_says_each_setting_and_refuses_an_unknown_key() {
        let config: Config = toml::from_str(
            "format = \"csv\"\nmaxrows = 5\npaths = [\"~/work/.rupu/transcripts\"]\nmemory_limit = \"2G\"\ntimezone = \"Asia/Tokyo\"\n",
        )
        .unwrap();
        assert_eq!(config.format.as_deref(), Some("csv"));
        assert_eq!(config.maxrows, Some(5));
        assert_eq!(config.timezone.as_deref(), Some("Asia/Tokyo"));
        assert!(matches!(config.memory_limit, Some(MemoryLimit::Size(ref s)) if s == "2G"));
        let config: Config =
            toml::from_str("[sources]\nlaptop = \"/mnt/laptop\"\nservers = [\"/mnt/a\", \"/mnt/b\"]\n")
                .unwrap();
        let sources = config.sources.unwrap();
        let machines: Vec<&String> = sources.keys().collect();
        assert_eq!(machines, ["laptop", "servers"]);
        assert_eq!(places_of("laptop", &sources["laptop"]).unwrap(), [PathBuf::from("/mnt/laptop")]);
        assert_eq!(places_of("servers", &sources["servers"]).unwrap().len(), 2);
        let wrong: Config = toml::from_str("[sources]\nlaptop = 3\n").unwrap();
        let why = places_of("laptop", &wrong.sources.unwrap()["laptop"]).unwrap_err();
        assert!(why.contains("not a path"), "{why}");
        // In the order written, not by name.
        let config: Config = toml::from_str("[sources]\nz = \"/z\"\na = \"/a\"\n").unwrap();
        assert_eq!(config.sources.unwrap().keys().collect::<Vec<_>>(), ["z", "a"]);
        let wrong = toml::from_str::<Config>("maxrow = 5\n").unwrap_err().to_string();
        assert!(wrong.contains("unknown field `maxrow`"), "{wrong}");
        assert!(parse_format("CSV").is_ok());
        assert!(parse_format("xml").unwrap_err().contains("one of table"), "{:?}", parse_format("xml"));
    }
}
