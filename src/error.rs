//! The one error type of txq: every way a command can fail, each keeping the error it came from as
//! its source. What is wrong with the data is never one of these (a damaged line or value is a
//! row of `errors`, an unreadable file a warning); the command line gives each kind its exit
//! code in one place ([`Error::exit_code`]).

use crate::text::escape;
use datafusion::arrow::error::ArrowError;
use datafusion::error::DataFusionError;
use datafusion::parquet::errors::ParquetError;
use std::io;
use std::path::PathBuf;

/// A result of txq.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a command of txq failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Asked for something that cannot be done: a flag, an argument or a name that is wrong.
    #[error("{0}")]
    Usage(String),
    /// A path given that is not there, or that cannot be looked at.
    #[error("{}: {why}", escape::path(path))]
    Path { path: PathBuf, why: String },
    /// No path given, and no default place of any format exists.
    #[error("no transcripts given and none found in the default places: looked for {0}")]
    NoDefaultPlace(String),
    /// A file given to read (a script, a prices file, stdin) that cannot be read or used.
    #[error("{}: {why}", escape::text(file))]
    Input { file: String, why: String },
    /// A statement failed to plan or to run.
    #[error(transparent)]
    Sql(#[from] DataFusionError),
    /// A file txq writes (an export's, a generated corpus's) could not be written.
    #[error("{}: cannot write: {source}", escape::path(path))]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Rows could not be encoded as Parquet, or read back from it, while writing an export.
    #[error("{0}")]
    Parquet(#[from] ParquetError),
    /// Rows could not be encoded while writing a file.
    #[error("{0}")]
    Arrow(#[from] ArrowError),
    /// Results could not be written to stdout (or to the shell's `\o` file).
    #[error("cannot write results: {0}")]
    Output(#[source] io::Error),
    /// The cluster of `--cluster` cannot be reached.
    #[error("{}: {why}", escape::text(url))]
    Cluster { url: String, why: String },
    /// Ctrl-C stopped the statement.
    #[error("query cancelled")]
    Cancelled,
    /// The report was written, and some of its periods spent more than `--budget`: which.
    #[error("{0}")]
    OverBudget(String),
}

/// The exit code of a report some of whose periods passed `--budget`.
pub const OVER_BUDGET_EXIT_CODE: u8 = 4;

/// The exit code of Ctrl-C: 128 + SIGINT, as shells report it.
pub const CANCELLED_EXIT_CODE: u8 = 130;

impl Error {
    /// The exit code of a run that ended with this error (docs/cli.md, "Exit codes"): 1 for a
    /// statement that failed, 2 for bad usage or nothing to read, 3 for what could not be written,
    /// 4 for a report written whose periods passed `--budget`, 130 after Ctrl-C, and 0 when the
    /// reader of the results went away (a closed pipe).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Sql(_) => 1,
            Error::Usage(_)
            | Error::Path { .. }
            | Error::NoDefaultPlace(_)
            | Error::Input { .. }
            | Error::Cluster { .. } => 2,
            Error::Output(e) if e.kind() == io::ErrorKind::BrokenPipe => 0,
            Error::Write { .. } | Error::Parquet(_) | Error::Arrow(_) | Error::Output(_) => 3,
            Error::Cancelled => CANCELLED_EXIT_CODE,
            Error::OverBudget(_) => OVER_BUDGET_EXIT_CODE,
        }
    }

    /// Results written to `out` failed: a writer's I/O error is the output's, any other is the
    /// statement's (a value that cannot be written in the format asked).
    pub fn of_output(e: ArrowError) -> Error {
        match e {
            ArrowError::IoError(_, io) => Error::Output(io),
            other => Error::Sql(other.into()),
        }
    }

    /// `path` could not be written.
    pub fn write(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Error {
        let path = path.into();
        move |source| Error::Write { path, source }
    }
}
