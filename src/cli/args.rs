//! The command line, defined once: flags, subcommands and their help, from which `--help`, the
//! shell completions and the manual pages are all made ([`command`]), and the version it tells.

use super::print::OutputFormat;
use clap::{CommandFactory, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// What `txq --version` says: the version, the commit it was built from (when built from git),
/// and the DataFusion it runs on.
pub static VERSION: LazyLock<String> = LazyLock::new(|| {
    let commit = match env!("TXQ_COMMIT") {
        "" => String::new(),
        commit => format!(" ({commit})"),
    };
    format!("{}{commit}, DataFusion {}", env!("CARGO_PKG_VERSION"), datafusion::DATAFUSION_VERSION)
});

/// The command line's definition, with its version: what parses the arguments, and what the
/// completions and manual pages are made from.
pub fn command() -> clap::Command {
    Args::command().version(VERSION.as_str())
}

impl Args {
    /// The arguments `args` says (the process's own, as `std::env::args_os`), or clap's error.
    pub fn parse_from_command<I, T>(args: I) -> Result<(Args, clap::ArgMatches), clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::FromArgMatches;
        let matches = command().try_get_matches_from(args)?;
        let args = Args::from_arg_matches(&matches)?;
        Ok((args, matches))
    }
}

/// A place labeled with the machine its files are of (`--label NAME=PATH`, the config file's
/// `[sources]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Label {
    pub(crate) machine: String,
    pub(crate) place: PathBuf,
    /// Whether its place is read even when paths are given (`--label`'s are; `[sources]`' only
    /// when the command line gives no path, like the config file's `paths`).
    pub(crate) always: bool,
}

/// `NAME=PATH`: a machine's name (printable, no `=`) and a place.
pub(crate) fn parse_label(value: &str) -> Result<Label, String> {
    let (machine, place) = value.split_once('=').ok_or_else(|| {
        format!("not NAME=PATH: {value:?} (a machine's name, then its place: laptop=/mnt/laptop)")
    })?;
    let machine = machine_name(machine)?;
    if place.is_empty() {
        return Err(format!("no place after {machine}="));
    }
    Ok(Label { machine, place: PathBuf::from(place), always: true })
}

/// A machine's name as a person gives it: trimmed, not empty, no control character.
pub(crate) fn machine_name(name: &str) -> Result<String, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("a machine's name is empty".into());
    }
    if name.chars().any(char::is_control) {
        return Err(format!("a machine's name has a control character: {name:?}"));
    }
    Ok(name.to_string())
}

/// SQL over AI-agent transcripts: every event type of every format is a table (the help names
/// the formats, from their descriptions).
#[derive(Debug, Parser)]
#[command(name = "txq", version, about = about(), long_about = None, after_help = AFTER_HELP)]
pub struct Args {
    /// Transcript directories (searched recursively) or files; with none, every default place
    /// that exists (the help lists them, from the format descriptions).
    #[arg(value_name = "PATH", help = paths_help(), long_help = None)]
    pub(crate) paths: Vec<PathBuf>,

    /// Run SQL (several statements separated by `;` allowed); repeatable, run in order.
    #[arg(short = 'e', long = "execute", value_name = "SQL")]
    pub(crate) execute: Vec<String>,

    /// Run the SQL in FILE; repeatable, run after every -e.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,

    /// How results are written.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table, global = true,
          default_value_if("json", clap::builder::ArgPredicate::IsPresent, "json"))]
    pub(crate) format: OutputFormat,

    /// As --format json (ccusage's spelling); on `txq daily|weekly|monthly|session|blocks`, the
    /// report in ccusage's JSON shape instead (docs/cli.md#ccusage).
    #[arg(short = 'j', long, global = true, conflicts_with = "format")]
    pub(crate) json: bool,

    /// Lines longer than this (bytes, or a size: 64M) are listed in `errors` instead of read;
    /// at least 1K.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = parse_line_limit)]
    pub(crate) max_line_bytes: usize,

    /// Memory that sorts, joins and aggregations may hold before they spill to disk (2G, 512M,
    /// 1.5GiB, bytes). Default: half the machine's memory (or its container's).
    #[arg(long, value_name = "SIZE", value_parser = parse_memory_limit, global = true)]
    pub(crate) memory_limit: Option<u64>,

    /// Where to write spill files (a fresh directory inside it, removed after). Default: the
    /// system's temporary directory ($TMPDIR, else /tmp).
    #[arg(long, value_name = "DIR", global = true)]
    pub(crate) spill_dir: Option<PathBuf>,

    /// Read every file whole, without the inference cache (in $TXQ_CACHE_DIR, else ~/.cache/txq).
    #[arg(long)]
    pub(crate) no_cache: bool,

    /// Read PATH too, as machine NAME's (the `machine` column of calls, tool_calls, sessions and
    /// rate_limits; another machine's copy of a file is read once); repeatable. Other files are
    /// this machine's ($TXQ_MACHINE, else the host name).
    #[arg(long, value_name = "NAME=PATH", global = true, value_parser = parse_label)]
    pub(crate) label: Vec<Label>,

    /// Say nothing on stderr but errors.
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,

    /// Prices laid over the built-in list (the `prices` table, `call_cost`): a file in LiteLLM's
    /// price-file format, like prices/model_prices.json, or a prices CSV (default: $TXQ_PRICES).
    #[arg(long, value_name = "FILE", global = true)]
    pub(crate) prices: Option<PathBuf>,

    /// Show at most this many rows of a table, counting the rest (0: all). Default: 40 in the
    /// shell, all with -e, -f or stdin. Other formats write every row.
    #[arg(long, value_name = "N", global = true)]
    pub(crate) maxrows: Option<usize>,

    /// Print the rows of the statement of -e (or -f, or `txq query NAME`), then the rows agents append, until Ctrl-C
    /// (exit 0): whole lines only, a file made later included. An aggregate, ORDER BY, join or
    /// LIMIT is run again as files change instead, at most once an --interval (docs/cli.md).
    #[arg(long, global = true)]
    pub(crate) follow: bool,

    /// With --follow: a statement run again runs at most this often, and files are looked at
    /// this often when no change is told (2s, 500ms, 1m).
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_interval, requires = "follow", global = true)]
    pub(crate) interval: std::time::Duration,

    /// With --follow: look at the files every --interval instead of being told of changes by
    /// the system (network file systems tell of none).
    #[arg(long, requires = "follow", global = true)]
    pub(crate) poll: bool,

    /// Run each statement of -e, -f, the shell or `txq query` on the Apache DataFusion Ballista
    /// cluster whose `txq scheduler` is at df://HOST:PORT (docs/scale-out.md).
    #[arg(long, value_name = "df://HOST:PORT", global = true)]
    pub(crate) cluster: Option<String>,

    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// What txq does besides running SQL.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Open the interactive SQL shell (what txq does with no SQL given on a terminal).
    Shell {
        /// Transcript directories or files, as for txq itself.
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Write every table as a Parquet dataset under OUT/<schema>/<table>/ (docs/export.md).
    Export {
        /// The folder to write; it must be new or empty unless --overwrite or --append.
        #[arg(long, value_name = "OUT")]
        out: PathBuf,
        /// Only these tables (`usage,tool_audit,runs`; `schema.table` for one schema's).
        #[arg(long, value_name = "TABLES", value_delimiter = ',')]
        tables: Vec<String>,
        /// Write Hive folders: date=YYYY-MM-DD (the run's start day) or run=<run_id>.
        #[arg(long, value_enum, value_name = "KEY")]
        partition_by: Option<crate::export::PartitionBy>,
        /// Replace the export already in OUT.
        #[arg(long, conflicts_with = "append")]
        overwrite: bool,
        /// Add to the export in OUT the runs it lacks; redo whole those still being written then.
        #[arg(long)]
        append: bool,
        /// Transcript directories or files, as for txq itself.
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Keep every transcript found in an append-only archive of Parquet files under OUT (a
    /// folder or an s3:// URL): only what is new since the last run is added, a run cut short
    /// leaves the archive before it, and `txq ... OUT` reads it back (docs/archive.md).
    Archive {
        /// The archive's folder or object store URL; made on the first run.
        #[arg(long, value_name = "OUT")]
        out: PathBuf,
        /// Transcript directories or files, as for txq itself.
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Spend per day, as `ccusage daily`: a row per day (--breakdown: per harness and model under
    /// it), a total, --json in ccusage's shape (docs/cli.md#ccusage).
    Daily(PeriodFlags),
    /// Spend per week (from Monday), as `ccusage weekly`.
    Weekly(PeriodFlags),
    /// Spend per month, as `ccusage monthly`.
    Monthly(PeriodFlags),
    /// Spend per session, as `ccusage session`: costliest first, with its project.
    Session(SessionFlags),
    /// Spend per 5-hour billing block of each harness, as `ccusage blocks`; --active shows the
    /// block under way with its time left, burn rate and projection.
    Blocks(BlockFlags),
    /// Claude Code's status line: reads its hook's JSON on stdin and prints one line, the
    /// session's cost, today's, the 5-hour block's with its time left, and the context used
    /// (docs/cli.md#statusline).
    Statusline(StatuslineFlags),
    /// Run a canned analysis of queries/ by name; --list lists them and what they answer.
    Query {
        /// The analysis, e.g. spend_by_model_day.
        #[arg(value_name = "NAME", required_unless_present = "list")]
        name: Option<String>,
        /// List the analyses instead.
        #[arg(long, conflicts_with = "name")]
        list: bool,
        /// A spend report's first day (daily, weekly, monthly, session, blocks): YYYY-MM-DD or
        /// YYYYMMDD, a day of --timezone.
        #[arg(long, value_name = "DATE", value_parser = crate::sql::reports::parse_day, conflicts_with = "list")]
        since: Option<chrono::NaiveDate>,
        /// A spend report's last day, included: YYYY-MM-DD or YYYYMMDD, a day of --timezone.
        #[arg(long, value_name = "DATE", value_parser = crate::sql::reports::parse_day, conflicts_with = "list")]
        until: Option<chrono::NaiveDate>,
        /// The time zone of a spend report's days, weeks, months and hours: an IANA name
        /// (Europe/Berlin), or an offset (+09:00). Default: the config file's `timezone`, else
        /// the machine's (TZ, else the system's).
        #[arg(long, value_name = "TZ", value_parser = crate::sql::reports::parse_time_zone, conflicts_with = "list")]
        timezone: Option<String>,
        /// With daily, weekly, monthly or blocks: a limit on each period's spend in US dollars
        /// (`20usd/day`, `/week`, `/month`, `/block`); the exit code is 4 when a period passed it
        /// (docs/cli.md#budgets), and under --follow a line on stderr says when one crosses it.
        #[arg(long, value_name = "USD/PERIOD", value_parser = crate::cli::budget::parse_budget, conflicts_with = "list")]
        budget: Option<crate::cli::budget::Budget>,
        /// Transcript directories or files, as for txq itself.
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Write one self-contained HTML page of charts and tables (spend and tokens over time, cache,
    /// agents, outcomes, tools, egress, costliest sessions), each from a canned query (docs/report.md).
    Report {
        /// The HTML file to write (replaced if it exists; its folder must exist); `-` for stdout.
        #[arg(long, value_name = "FILE", value_parser = parse_report_out)]
        out: PathBuf,
        /// The spend reports' first day: YYYY-MM-DD or YYYYMMDD, a day of --timezone.
        #[arg(long, value_name = "DATE", value_parser = crate::sql::reports::parse_day)]
        since: Option<chrono::NaiveDate>,
        /// The spend reports' last day, included: YYYY-MM-DD or YYYYMMDD, a day of --timezone.
        #[arg(long, value_name = "DATE", value_parser = crate::sql::reports::parse_day)]
        until: Option<chrono::NaiveDate>,
        /// The time zone of the report's hours and days: an IANA name (Europe/Berlin), or an
        /// offset (+09:00). Default: the config file's `timezone`, else the machine's.
        #[arg(long, value_name = "TZ", value_parser = crate::sql::reports::parse_time_zone)]
        timezone: Option<String>,
        /// Transcript directories or files, as for txq itself.
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Print a completion script for SHELL on stdout: `txq completions bash >
    /// ~/.local/share/bash-completion/completions/txq` (zsh: a file `_txq` in a folder of
    /// $fpath; fish: ~/.config/fish/completions/txq.fish; powershell: add it to $PROFILE).
    Completions {
        /// The shell to complete in.
        #[arg(value_enum, value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the manual page of txq (or of one of its commands) on stdout, as roff: `txq man |
    /// man -l -`; or write every page into DIR (txq.1, txq-export.1, ...).
    Man {
        /// The command whose page to print (export, query, ...); txq's own when left out.
        #[arg(value_name = "COMMAND", conflicts_with = "out")]
        command: Option<String>,
        /// Write every page into this folder instead (it is made if missing): put it on $MANPATH,
        /// or use ~/.local/share/man/man1.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Run a Ballista scheduler for `txq --cluster`, with Ballista's own flags (--bind-host,
    /// --bind-port, -s pull-staged|push-staged, ...; `txq scheduler --help` lists them).
    #[command(disable_help_flag = true)]
    Scheduler {
        /// Ballista's scheduler flags.
        #[arg(value_name = "FLAGS", trailing_var_arg = true, allow_hyphen_values = true)]
        flags: Vec<std::ffi::OsString>,
    },
    /// Run a Ballista executor for `txq --cluster`, with Ballista's own flags (--scheduler-host,
    /// --scheduler-port, --bind-port, --bind-grpc-port, --work-dir, --vcores, -s, ...).
    #[command(disable_help_flag = true)]
    Executor {
        /// Ballista's executor flags.
        #[arg(value_name = "FLAGS", trailing_var_arg = true, allow_hyphen_values = true)]
        flags: Vec<std::ffi::OsString>,
    },
    /// Print the prices table in use: the built-in list, with --prices FILE (or $TXQ_PRICES)
    /// laid over it. Reads no transcripts.
    Prices,
    /// Write a deterministic sample corpus of transcripts, damaged files included (--harness: a
    /// harness's home).
    Generate(crate::generate::command::GenerateFlags),
}

impl Command {
    /// The flags of a spend report's command (`txq daily`, ...), if it is one.
    pub(crate) fn spend_flags(&self) -> Option<&SpendFlags> {
        match self {
            Command::Daily(f) | Command::Weekly(f) | Command::Monthly(f) => Some(&f.spend),
            Command::Session(f) => Some(&f.spend),
            Command::Blocks(f) => Some(&f.spend),
            _ => None,
        }
    }

    /// The `--timezone` of a command that takes one, to lay the config file's under.
    pub(crate) fn time_zone_mut(&mut self) -> Option<&mut Option<String>> {
        match self {
            Command::Query { timezone, .. } | Command::Report { timezone, .. } => Some(timezone),
            Command::Daily(f) | Command::Weekly(f) | Command::Monthly(f) => Some(&mut f.spend.timezone),
            Command::Session(f) => Some(&mut f.spend.timezone),
            Command::Blocks(f) => Some(&mut f.spend.timezone),
            Command::Statusline(f) => Some(&mut f.timezone),
            _ => None,
        }
    }
}

/// What `txq statusline` takes.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct StatuslineFlags {
    /// A limit on today's spend (`20usd/day`) or the block's (`5usd/block`): that figure is
    /// green under 80 % of it, yellow to 100 %, red and marked over past it (NO_COLOR: marked
    /// only). The exit code stays 0: a status line that fails is blank.
    #[arg(long, value_name = "USD/PERIOD", value_parser = crate::cli::budget::parse_budget)]
    pub(crate) budget: Option<crate::cli::budget::Budget>,
    /// The time zone of "today" and of the blocks' hours: an IANA name (Europe/Berlin), or an
    /// offset (+09:00). Default: the config file's `timezone`, else the machine's.
    #[arg(short = 'z', long, value_name = "TZ", value_parser = crate::sql::reports::parse_time_zone)]
    pub(crate) timezone: Option<String>,
    /// Where to read the spend from: transcript directories or files, as for txq itself (the
    /// default places when none are given). The hook's transcript_path is read besides.
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,
}

/// What every spend report takes, with ccusage's names and short flags.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SpendFlags {
    /// The first day: YYYY-MM-DD or YYYYMMDD, a day of --timezone.
    #[arg(short = 's', long, value_name = "DATE", value_parser = crate::sql::reports::parse_day)]
    pub(crate) since: Option<chrono::NaiveDate>,
    /// The last day, included: YYYY-MM-DD or YYYYMMDD.
    #[arg(short = 'u', long, value_name = "DATE", value_parser = crate::sql::reports::parse_day)]
    pub(crate) until: Option<chrono::NaiveDate>,
    /// The time zone of the days: an IANA name (Europe/Berlin), or an offset (+09:00). Default:
    /// the config file's `timezone`, else the machine's (TZ, else the system's).
    #[arg(short = 'z', long, value_name = "TZ", value_parser = crate::sql::reports::parse_time_zone)]
    pub(crate) timezone: Option<String>,
    /// Under each row, a row per harness and model, with the row as their subtotal.
    #[arg(short = 'b', long)]
    pub(crate) breakdown: bool,
    /// Oldest first (asc) or newest first (desc); a session report is costliest first.
    #[arg(short = 'o', long, value_enum, value_name = "ORDER")]
    pub(crate) order: Option<Order>,
    /// The narrow table: period, models, uncached input, output, cost.
    #[arg(long)]
    pub(crate) compact: bool,
    /// Leave the costs out, of the table and the JSON.
    #[arg(long)]
    pub(crate) no_cost: bool,
    /// Accepted for ccusage's scripts: txq never fetches prices (docs/prices.md).
    #[arg(short = 'O', long, hide = true)]
    pub(crate) offline: bool,
    /// Accepted for ccusage's scripts, as --offline.
    #[arg(long, hide = true)]
    pub(crate) no_offline: bool,
    /// Accepted for ccusage's scripts: txq's tables have no color.
    #[arg(long, hide = true)]
    pub(crate) color: bool,
    /// Accepted for ccusage's scripts, as --color.
    #[arg(long, hide = true)]
    pub(crate) no_color: bool,
    /// Accepted for ccusage's scripts: txq reads files on every core.
    #[arg(long, hide = true)]
    pub(crate) single_thread: bool,
    /// Accepted for ccusage's scripts: every harness found is read.
    #[arg(long, hide = true)]
    pub(crate) all: bool,
    /// ccusage's cost mode: auto and calculate are what txq does (every call priced from its
    /// tokens); display (the cost a line carries) is refused.
    #[arg(short = 'm', long, value_enum, value_name = "MODE")]
    pub(crate) mode: Option<CostMode>,
    /// Transcript directories or files, as for txq itself.
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,
}

/// `txq daily|weekly|monthly`: a spend report's flags, and the periods shown.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct PeriodFlags {
    #[command(flatten)]
    pub(crate) spend: SpendFlags,
    /// Only the last N periods (1: today, this week or this month).
    #[arg(long, value_name = "N")]
    pub(crate) last: Option<u32>,
    /// In --json, each period's spend per harness too (`agents`), as ccusage's --by-agent.
    #[arg(long)]
    pub(crate) by_agent: bool,
    /// A limit on each period's spend, in US dollars: `--budget 20usd/day` (weekly: /week, monthly: /month). Periods over it are
    /// marked, and the exit code is 4 when any is (docs/cli.md#budgets); under --follow, a line
    /// on stderr the moment one crosses it.
    #[arg(long, value_name = "USD/PERIOD", value_parser = crate::cli::budget::parse_budget)]
    pub(crate) budget: Option<crate::cli::budget::Budget>,
    /// A row per period and project (the working directory's last two parts).
    #[arg(short = 'i', long)]
    pub(crate) instances: bool,
    /// Only the calls of this project: its last two parts (work/app), its folder's name, its
    /// whole path, or its Claude Code folder name (-home-me-work-app).
    #[arg(short = 'p', long, value_name = "PROJECT", allow_hyphen_values = true)]
    pub(crate) project: Option<String>,
}

/// `txq session`: a spend report's flags, and one session.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SessionFlags {
    #[command(flatten)]
    pub(crate) spend: SpendFlags,
    /// Only the session of this id: as its file names it, or as its lines do.
    #[arg(short = 'i', long, value_name = "ID")]
    pub(crate) id: Option<String>,
    /// Only the sessions of this project, named as for `txq daily --project`.
    #[arg(short = 'p', long, value_name = "PROJECT", allow_hyphen_values = true)]
    pub(crate) project: Option<String>,
}

/// `txq blocks`: a spend report's flags, and which blocks.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct BlockFlags {
    #[command(flatten)]
    pub(crate) spend: SpendFlags,
    /// Only the blocks under way, with the time left, the burn rate and the projection to the
    /// block's end.
    #[arg(short = 'a', long)]
    pub(crate) active: bool,
    /// Only the blocks of the last 3 days.
    #[arg(short = 'r', long)]
    pub(crate) recent: bool,
    /// A limit on each 5-hour block's spend, in US dollars: `--budget 20usd/block`. Periods over it are
    /// marked, and the exit code is 4 when any is (docs/cli.md#budgets); under --follow, a line
    /// on stderr the moment one crosses it.
    #[arg(long, value_name = "USD/BLOCK", value_parser = crate::cli::budget::parse_budget)]
    pub(crate) budget: Option<crate::cli::budget::Budget>,
    /// With --active: warn when the block's projected tokens near (80 %) or pass this many
    /// (`max`: the most any earlier block of the harness used).
    #[arg(short = 't', long, value_name = "TOKENS", value_parser = parse_token_limit)]
    pub(crate) token_limit: Option<TokenLimit>,
}

/// A `--token-limit`: a number of tokens, or the most an earlier block used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenLimit {
    Tokens(i64),
    Max,
}

fn parse_token_limit(s: &str) -> Result<TokenLimit, String> {
    match s.trim() {
        "max" => Ok(TokenLimit::Max),
        n => n
            .parse::<i64>()
            .ok()
            .filter(|n| *n > 0)
            .map(TokenLimit::Tokens)
            .ok_or_else(|| format!("not a token limit: {s:?} (give a number of tokens, 500000, or max)")),
    }
}

/// ccusage's `--mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CostMode {
    Auto,
    Calculate,
    Display,
}

/// A report's order, as ccusage's --order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Order {
    Asc,
    Desc,
}

/// A duration of `--interval`: a number of seconds, or one with `ms`, `s` or `m` after it.
fn parse_interval(s: &str) -> Result<std::time::Duration, String> {
    let text = s.trim();
    let (number, unit) = match text.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let seconds = match unit.trim() {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        _ => return Err(format!("not a duration: {s:?} (give 2s, 500ms or 1m)")),
    };
    let value: f64 = number.parse().map_err(|_| format!("not a duration: {s:?} (give 2s, 500ms or 1m)"))?;
    let duration = std::time::Duration::try_from_secs_f64(value * seconds)
        .map_err(|_| format!("not a duration: {s:?} (give 2s, 500ms or 1m)"))?;
    if duration < MIN_INTERVAL {
        return Err(format!("{s:?} is shorter than the shortest interval, 10ms"));
    }
    Ok(duration)
}

/// The shortest `--interval`: a shorter one would look at every file many times a second.
const MIN_INTERVAL: std::time::Duration = std::time::Duration::from_millis(10);

/// The rows of a table the shell shows unless `--maxrows` says otherwise.
pub(crate) const SHELL_MAX_ROWS: usize = 40;

/// The smallest `--max-line-bytes`: a smaller limit would make ordinary events (a `run_start`,
/// a `usage`: a few hundred bytes) damaged lines, which is a mistyped flag, not a wish.
pub(crate) const MIN_LINE_LIMIT: usize = 1024;

fn parse_line_limit(s: &str) -> Result<usize, String> {
    let bytes = crate::text::size::parse(s)?;
    if bytes < MIN_LINE_LIMIT as u64 {
        return Err(format!(
            "{bytes} bytes is below the smallest line limit, {MIN_LINE_LIMIT} (1K): ordinary events are longer"
        ));
    }
    usize::try_from(bytes).map_err(|_| format!("{s:?} is too large"))
}

pub(crate) fn parse_memory_limit(s: &str) -> Result<u64, String> {
    match crate::text::size::parse(s)? {
        0 => Err("a memory limit of 0 bytes leaves no statement anything to run in".into()),
        bytes => Ok(bytes),
    }
}

/// What txq reads, for `txq --help`: every format's transcripts, by the names their descriptions
/// give them.
fn about() -> String {
    format!(
        "SQL over AI-agent transcripts: what your agents spent, per day, session, model and tool. \
         `calls`, `tool_calls` and `sessions` hold every harness's, each call counted once; every \
         event type of {} is a table too",
        crate::format::transcripts_read(&crate::format::all())
    )
}

/// The help of the paths: where txq looks when given none, from the format descriptions.
fn paths_help() -> String {
    format!(
        "Transcript directories (searched recursively) or files. Default: every default place that exists: {}",
        crate::format::default_places(&crate::format::all())
    )
}

/// What `txq report --out -` means: the page on stdout.
pub(crate) const STDOUT: &str = "-";

/// `txq report --out FILE`: stdout for `-`, else a file whose folder exists (checked before anything is
/// read, so that a mistyped folder costs no reading of the corpus).
fn parse_report_out(s: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(s);
    if s == STDOUT {
        return Ok(path);
    }
    if s.is_empty() || s.ends_with('/') || path.is_dir() {
        return Err(format!(
            "{s:?} is a folder or no file name: give the HTML file to write, e.g. report.html"
        ));
    }
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        return Err(format!(
            "no folder {}: the report is written into a folder that exists (make it first)",
            crate::text::escape::path(folder)
        ));
    }
    Ok(path)
}

const AFTER_HELP: &str = "\
Point it at your home: with no PATH it reads every agent's default place (PATH above lists
them), and ccusage's reports work as they do there (docs/cli.md#ccusage):
  txq daily                       spend per day, in your time zone, with a total (--json: ccusage's)
  txq session --since 20261101    per session, costliest first, with its project
  txq blocks --active             the 5-hour block under way: time left, burn rate, projection

Examples:
  txq -e \"select harness, model, sum(input_tokens), sum(output_tokens) from calls group by 1, 2\"
  txq query daily --since 2026-11-01
  txq report --out report.html /data/fleet/transcripts ./transcripts
  txq -e \"select model, sum(input_tokens), sum(output_tokens) from usage group by model\"
  txq -e \"select tool, decision, count(*) from tool_audit where blocked group by 1, 2\"
  txq --format csv -f report.sql /data/fleet/transcripts > report.csv
  txq --follow -e \"select ts, run_id, tool, decision from tool_audit where blocked\"

Exit codes: 0 success (a closed pipe too, and Ctrl-C ending --follow); 1 a statement failed; 2 bad usage, or nothing to read;
3 results could not be written; 130 Ctrl-C stopped it.
Settings people repeat (format, maxrows, paths, prices, memory_limit) may live in
$XDG_CONFIG_HOME/txq/config.toml (else ~/.config/txq/config.toml); TXQ_FORMAT, TXQ_MAXROWS,
TXQ_PRICES and TXQ_MEMORY_LIMIT override it, and flags override both (docs/cli.md).
Tables and columns: docs/tables.md.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_is_a_file_in_a_folder_that_exists_or_stdout() {
        assert_eq!(parse_report_out("-"), Ok(PathBuf::from("-")));
        assert_eq!(parse_report_out("report.html"), Ok(PathBuf::from("report.html")));
        assert!(
            parse_report_out("/no/such/folder/report.html")
                .unwrap_err()
                .contains("no folder /no/such/folder")
        );
        assert!(parse_report_out("/tmp").unwrap_err().contains("is a folder"));
    }
}
