//! The command line, as Optuna's `optuna` command takes it.

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::output::Format;

/// Optuna's CLI over saturate's storages, plus `export` and `watch`.
#[derive(Debug, Parser)]
#[command(name = "saturate", version, about, long_about = None)]
pub struct Cli {
    /// Storage: a journal file path, `sqlite:///PATH` or
    /// `postgresql://USER[:PASSWORD]@HOST[:PORT]/DB` (also read from OPTUNA_STORAGE).
    #[arg(long, global = true, env = "OPTUNA_STORAGE", hide_env_values = true)]
    pub storage: Option<String>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands (Optuna's, then saturate's own).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show a list of studies.
    Studies(ListArgs),
    /// Get all study names stored in a specified storage.
    StudyNames(NamesArgs),
    /// Show a list of trials.
    Trials(TrialsArgs),
    /// Show the best trial.
    BestTrial(TrialsArgs),
    /// Show a list of trials located at the Pareto front.
    BestTrials(TrialsArgs),
    /// Create a new study.
    CreateStudy(CreateStudyArgs),
    /// Delete a specified study.
    DeleteStudy(StudyNameArg),
    /// Study commands (`study set-user-attr`).
    #[command(subcommand)]
    Study(StudyCommand),
    /// Create a new trial and suggest parameters.
    Ask(AskArgs),
    /// Finish a trial, which was created by the ask command.
    Tell(TellArgs),
    /// Storage commands (`storage upgrade`).
    #[command(subcommand)]
    Storage(StorageCommand),
    /// Write every trial of a study as CSV or JSON (saturate's addition).
    Export(ExportArgs),
    /// A live table of a study's trials, refreshed until interrupted (saturate's addition).
    Watch(WatchArgs),
    /// The hyperparameter schedule that led to a trial of a population-based training run:
    /// its ancestors' segments, first generation first (saturate's addition).
    Lineage(LineageArgs),
}

/// `studies`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format.
    #[arg(short = 'f', long = "format", value_enum, default_value = "table")]
    pub format: Format,
    /// Flatten nested columns such as directions.
    #[arg(long)]
    pub flatten: bool,
}

/// `study-names`.
#[derive(Debug, Args)]
pub struct NamesArgs {
    /// Output format.
    #[arg(short = 'f', long = "format", value_enum, default_value = "value")]
    pub format: Format,
}

/// `trials`, `best-trial`, `best-trials`.
#[derive(Debug, Args)]
pub struct TrialsArgs {
    /// The name of the study.
    #[arg(long)]
    pub study_name: String,
    /// Output format.
    #[arg(short = 'f', long = "format", value_enum, default_value = "table")]
    pub format: Format,
    /// Flatten nested columns such as params and user_attrs.
    #[arg(long)]
    pub flatten: bool,
}

/// `lineage`.
#[derive(Debug, Args)]
pub struct LineageArgs {
    /// The name of the study.
    #[arg(long)]
    pub study_name: String,
    /// The trial whose lineage to print (e.g. the best trial's number).
    #[arg(long)]
    pub trial_number: u64,
    /// Output format.
    #[arg(short = 'f', long = "format", value_enum, default_value = "table")]
    pub format: Format,
    /// Flatten nested columns such as params.
    #[arg(long)]
    pub flatten: bool,
}

/// A direction as typed on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DirectionArg {
    /// Smaller is better.
    Minimize,
    /// Larger is better.
    Maximize,
}

/// `create-study`.
#[derive(Debug, Args)]
pub struct CreateStudyArgs {
    /// A human-readable name of a study to distinguish it from others.
    #[arg(long)]
    pub study_name: Option<String>,
    /// Direction of optimization of a single-objective study.
    #[arg(long, value_enum, conflicts_with = "directions")]
    pub direction: Option<DirectionArg>,
    /// If specified, the creation of the study is skipped without any error when the study
    /// name is duplicated.
    #[arg(long)]
    pub skip_if_exists: bool,
    /// Directions of a multi-objective study, separated by spaces.
    #[arg(long, value_enum, num_args = 1..)]
    pub directions: Option<Vec<DirectionArg>>,
}

/// `delete-study`.
#[derive(Debug, Args)]
pub struct StudyNameArg {
    /// The name of the study.
    #[arg(long)]
    pub study_name: String,
}

/// `study ...`.
#[derive(Debug, Subcommand)]
pub enum StudyCommand {
    /// Set a user attribute to a study.
    SetUserAttr(SetUserAttrArgs),
}

/// `study set-user-attr`.
#[derive(Debug, Args)]
pub struct SetUserAttrArgs {
    /// The name of the study to set the user attribute to.
    #[arg(long)]
    pub study_name: String,
    /// Key of the user attribute.
    #[arg(short = 'k', long)]
    pub key: String,
    /// Value to be set (stored as a string, as Optuna does).
    #[arg(long)]
    pub value: String,
}

/// `ask`.
#[derive(Debug, Args)]
pub struct AskArgs {
    /// Name of the study.
    #[arg(long)]
    pub study_name: String,
    /// Class name of the sampler: `TPESampler` (default), `RandomSampler`.
    #[arg(long)]
    pub sampler: Option<String>,
    /// Sampler keyword arguments as JSON (`{"seed": 1}`).
    #[arg(long)]
    pub sampler_kwargs: Option<String>,
    /// Search space as JSON: names to Optuna's distribution JSON
    /// (`{"x": {"name": "FloatDistribution", "attributes": {"low": 0.0, "high": 1.0}}}`).
    #[arg(long)]
    pub search_space: Option<String>,
    /// Output format.
    #[arg(short = 'f', long = "format", value_enum, default_value = "json")]
    pub format: Format,
    /// Flatten nested columns such as params.
    #[arg(long)]
    pub flatten: bool,
}

/// A final state as typed on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StateArg {
    /// Finished with values.
    Complete,
    /// Stopped early.
    Pruned,
    /// Failed.
    Fail,
}

/// `tell`.
#[derive(Debug, Args)]
pub struct TellArgs {
    /// Name of the study.
    #[arg(long)]
    pub study_name: String,
    /// Trial number.
    #[arg(long)]
    pub trial_number: u64,
    /// Objective values.
    #[arg(long, num_args = 1.., allow_negative_numbers = true)]
    pub values: Option<Vec<f64>>,
    /// Trial state.
    #[arg(long, value_enum)]
    pub state: Option<StateArg>,
    /// If specified, tell is skipped without any error when the trial is already finished.
    #[arg(long)]
    pub skip_if_finished: bool,
}

/// `storage ...`.
#[derive(Debug, Subcommand)]
pub enum StorageCommand {
    /// Report the schema version of an RDB storage (no migration is implemented yet).
    Upgrade,
}

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// One row per trial, Optuna's `trials_dataframe` columns.
    Csv,
    /// The whole study: directions, attributes, every trial with its distributions and
    /// intermediate values.
    Json,
}

/// `export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The name of the study.
    #[arg(long)]
    pub study_name: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: ExportFormat,
    /// Write to this file instead of standard output.
    #[arg(short = 'o', long)]
    pub output: Option<std::path::PathBuf>,
}

/// `watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The name of the study.
    #[arg(long)]
    pub study_name: String,
    /// Seconds between refreshes.
    #[arg(long, default_value_t = 2.0)]
    pub interval: f64,
    /// Show this many of the latest trials (0: all).
    #[arg(long, default_value_t = 20)]
    pub tail: usize,
    /// Print the table once and exit (for scripts and tests).
    #[arg(long)]
    pub once: bool,
}
