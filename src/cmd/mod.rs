//! Subcommands: argument structs, translation into the plan of one `ops` call, output
//! rendering and the exit code. One module per subcommand (`barrier`, `snapshot`, `tail`,
//! …; none imports another); what several of them print alike is in [`render`], and the
//! shared plumbing (global flags, exit codes, output, interrupts) in the other files here.
//!
//! Every subcommand shares [`global::GlobalArgs`]; [`dispatch`] runs one parsed
//! command and returns a [`exit::CliError`] that the binary maps to its exit code.

pub mod assets;
pub mod barrier;
pub mod batch_table;
pub mod completions;
pub mod demo;
pub mod dev_cluster;
pub mod exit;
pub mod flag_scope;
pub mod global;
pub mod interrupt;
pub mod leader;
pub mod logging;
pub mod output;
pub mod produce;
pub mod render;
pub mod run;
pub mod schema;
pub mod schema_cache;
pub mod shell_completion;
pub mod snapshot;
pub mod tail;
pub mod tail_host;
pub mod threads;

use std::ffi::OsString;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, parser::ValueSource};

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::{GlobalArgs, OutputMode};

/// Streams over a Kafka-compatible broker: schemas, Arrow tails, topologies,
/// barrier cuts, state snapshots and leader elections.
///
/// Also runs as `krabka streams …` when installed on PATH next to the krabka CLI.
#[derive(Debug, Parser)]
#[command(
    name = "krabka-streams",
    version,
    propagate_version = true,
    max_term_width = 100,
    after_help = "Exit codes: 0 ok, 1 failure, 2 usage, 3 check failed, 4 broker/registry unreachable or outcome unknown, 130 cancelled."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a topology file: validate it (--check), print its graph (--explain), run it as a consumer group (-b), or offline over Arrow IPC (--input).
    Run(run::RunArgs),
    /// Walk through every subcommand on an embedded cluster and registry, no setup needed.
    Demo(demo::DemoArgs),
    /// Serve an embedded Kafka-protocol cluster and schema registry until Ctrl-C.
    ///
    /// Serves on 127.0.0.1, in memory, a Kafka-protocol cluster (printed as
    /// BOOTSTRAP=host:port) and a Confluent-compatible schema registry
    /// (REGISTRY=http://host:port), with __coordination_state (16 partitions) and
    /// __barrier_state (50) created, so every subcommand works against it, `leader run
    /// --create-topic` included: `krabka-streams -b BOOTSTRAP --registry REGISTRY …`.
    /// Other topics are created on first use (4 partitions) or with --topic. Data is
    /// lost when it stops.
    DevCluster(dev_cluster::DevClusterArgs),
    /// Barrier cuts in __barrier_state: list, show, watch, verify, decode.
    Barrier(barrier::BarrierArgs),
    /// Schema registry: prewarm subjects, inspect schemas, decode frames, check compatibility.
    Schema(schema::SchemaArgs),
    /// Run or inspect leader elections fenced by the producer epoch.
    Leader(leader::LeaderArgs),
    /// State snapshot files: list, dump, restore, verify, prune, and restore to a barrier cut.
    Snapshot(snapshot::SnapshotArgs),
    /// Read topics as Arrow record batches: Arrow IPC, Parquet, NDJSON or a table.
    Tail(Box<tail::TailArgs>),
    /// Write rows of Arrow IPC, Parquet or NDJSON (or plain lines, as kcat -P) to a topic.
    Produce(Box<produce::ProduceArgs>),
    /// Print a shell completion script.
    Completions(completions::CompletionsArgs),
    /// Regenerate the committed completions and man pages (used by `cargo xtask`). Not part
    /// of the public command line: added to the parser only (see [`parser_command`]), so no
    /// completion script, man page or `help` lists it.
    #[command(skip)]
    GenerateAssets(assets::GenerateAssetsArgs),
}

impl Command {
    /// The subcommand's name as it appears in error lines.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Run(_) => "run",
            Command::Demo(_) => "demo",
            Command::DevCluster(_) => "dev-cluster",
            Command::Barrier(args) => args.name(),
            Command::Schema(args) => args.name(),
            Command::Leader(_) => "leader",
            Command::Snapshot(args) => args.command.name(),
            Command::Tail(_) => "tail",
            Command::Produce(_) => "produce",
            Command::Completions(_) => "completions",
            Command::GenerateAssets(_) => "generate-assets",
        }
    }
}

/// The public command line: every subcommand, each showing only the shared flags it uses
/// (`flag_scope`). Help, completions and man pages are generated from this.
pub fn cli_command() -> clap::Command {
    flag_scope::apply(Cli::command())
}

const GENERATE_ASSETS: &str = "generate-assets";

/// What the binary parses: the public command line plus the hidden `generate-assets`.
fn parser_command() -> clap::Command {
    cli_command().subcommand(assets::GenerateAssetsArgs::augment_args(
        clap::Command::new(GENERATE_ASSETS).hide(true),
    ))
}

/// Parses the command line. On failure returns the clap error and whether JSON errors were asked for.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Cli, (clap::Error, OutputMode)> {
    let args: Vec<OsString> = args.into_iter().collect();
    let matches = parser_command()
        .try_get_matches_from(&args)
        .map_err(|e| (e, json_requested(&args)))?;
    let mut cli = match matches.subcommand_matches(GENERATE_ASSETS) {
        Some(sub) => assets::GenerateAssetsArgs::from_arg_matches(sub)
            .and_then(|assets| {
                Ok(Cli {
                    global: GlobalArgs::from_arg_matches(&matches)?,
                    command: Command::GenerateAssets(assets),
                })
            })
            .map_err(|e| (e, json_requested(&args)))?,
        None => Cli::from_arg_matches(&matches).map_err(|e| (e, json_requested(&args)))?,
    };
    cli.global.connection.bootstrap_from_env =
        matches.value_source("bootstrap_server") == Some(ValueSource::EnvVariable);
    Ok(cli)
}

/// Whether the (unparsable) command line or the environment asked for JSON output.
fn json_requested(args: &[OsString]) -> OutputMode {
    let mut json = std::env::var(global::ENV_OUTPUT).is_ok_and(|v| v == "json");
    let mut it = args.iter().filter_map(|a| a.to_str());
    while let Some(a) = it.next() {
        if a == "--output=json" || (a == "--output" && it.next() == Some("json")) {
            json = true;
        } else if a == "--output=human" {
            json = false;
        }
    }
    if json {
        OutputMode::Json
    } else {
        OutputMode::Human
    }
}

impl Command {
    /// Why this invocation cannot honour `--dry-run`, when it cannot. A command either
    /// honours it (validates and reads, changes nothing and says what it would have
    /// done) or is refused here before it starts, so the dry-run banner never lies.
    pub fn dry_run_refusal(&self) -> Option<String> {
        match self {
            Command::Run(a) if !a.check && !a.explain => Some(
                "it consumes records, writes its sinks and commits offsets; validate the topology with `run --check` (or print it with `--explain`)"
                    .into(),
            ),
            Command::Tail(a) if a.group.is_some() => {
                Some("-g commits the group's offsets; tail without -g to only read".into())
            }
            Command::Tail(a) => a.out.as_ref().filter(|o| o.as_os_str() != "-").map(|out| {
                format!(
                    "--out {} writes a file; tail to stdout or drop --dry-run",
                    out.display()
                )
            }),
            Command::Barrier(a) => a.dry_run_refusal(),
            Command::Snapshot(a) => a.command.dry_run_refusal(),
            Command::Leader(a) => a.dry_run_refusal(),
            Command::Demo(_) => {
                Some("the demo creates topics, subjects and files as it walks through".into())
            }
            Command::DevCluster(_) => Some("it serves a cluster until Ctrl-C".into()),
            Command::GenerateAssets(_) => {
                Some("it writes the completions and man pages".into())
            }
            Command::Run(_)
            | Command::Schema(_)
            | Command::Produce(_)
            | Command::Completions(_) => None,
        }
    }

    /// The name of the invocation in a `--dry-run` refusal.
    fn full_name(&self) -> &'static str {
        match self {
            Command::Leader(a) => a.name(),
            other => other.name(),
        }
    }
}

/// Runs one parsed command.
pub fn dispatch(cli: Cli) -> CliResult<()> {
    logging::init(&cli.global.output);
    interrupt::install_process_handler(cli.global.output.output, cli.command.name());
    if cli.global.output.dry_run
        && let Some(why) = cli.command.dry_run_refusal()
    {
        return Err(CliError::usage(format!(
            "`{}` does not support --dry-run: {why}",
            cli.command.full_name()
        )));
    }
    match cli.command {
        Command::Run(args) => run::run(&cli.global, args),
        Command::Demo(args) => demo::run(&cli.global, args),
        Command::DevCluster(args) => dev_cluster::run(&cli.global, args),
        Command::Barrier(args) => barrier::run(&cli.global, args),
        Command::Schema(args) => schema::run(&cli.global, args),
        Command::Leader(args) => leader::run(&cli.global, args),
        Command::Snapshot(args) => snapshot::run(&cli.global, args),
        Command::Tail(args) => tail::run(&cli.global, *args),
        Command::Produce(args) => produce::run(&cli.global, *args),
        Command::Completions(args) => completions::run(args),
        Command::GenerateAssets(args) => assets::run(args),
    }
}

/// Maps a clap error to the exit-code table: help and version are success, the rest usage.
pub fn clap_error_code(e: &clap::Error) -> i32 {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => 0,
        _ => exit::code(exit::ExitCode::Usage),
    }
}

/// `run --out FILE` is a natural guess from `tail --out`, and clap suggests
/// `--output` (the report format), which points the wrong way: `run` writes data
/// with `--sink NAME=FILE`. Replaces the suggestion with that.
fn redirect_output_flags(e: &mut clap::Error) {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return;
    }
    let arg = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(a)) => a.clone(),
        _ => return,
    };
    let usage = e
        .get(ContextKind::Usage)
        .map(|u| u.to_string())
        .unwrap_or_default();
    let flag = arg.split('=').next().unwrap_or("");
    if usage.contains(" run") && matches!(flag, "--out" | "-o" | "--output-file") {
        e.insert(
            ContextKind::SuggestedArg,
            ContextValue::String("--sink".into()),
        );
        e.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![
                "`run` writes data with --sink NAME=FILE (one per sink; - for stdout); --output is the report format (human|json)"
                    .into(),
            ]),
        );
    }
}

/// Prints a clap error in the requested mode and returns its exit code.
pub fn report_clap_error(mut e: clap::Error, mode: OutputMode) -> i32 {
    let code = clap_error_code(&e);
    redirect_output_flags(&mut e);
    if code != 0 && mode == OutputMode::Json {
        let text = e.render().to_string();
        let message = text
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ")
            .to_string();
        output::print_error(mode, "", &CliError::usage(message));
    } else {
        let _ = e.print();
    }
    code
}
