//! Which of the shared flags ([`crate::cmd::global`]) each command shows in its help, its
//! man page and its completions.
//!
//! The shared flags stay `global`: they are accepted before or after any subcommand, so a
//! wrapper or alias that always passes `-b` keeps working. But a command's help lists only
//! the groups it reads — the Kafka connection flags only where the command talks to a
//! broker, the registry flags only where it talks to a registry, `--dry-run`/`--yes` only
//! where it changes something. Each command gets its own copy of every shared flag, visible
//! or hidden; clap propagates a global flag only into commands that do not define it, and
//! carries the value back to the root either way, so parsing is unchanged.

use clap::Command;

/// Groups of shared flags, as bits.
pub const KAFKA: u8 = 1 << 0;
/// `--command-config`: Kafka client properties, also the registry client's TLS keys.
pub const CLIENT_CONFIG: u8 = 1 << 1;
pub const TIMEOUTS: u8 = 1 << 2;
pub const REGISTRY: u8 = 1 << 3;
pub const REPORT: u8 = 1 << 4;
pub const LOGS: u8 = 1 << 5;
pub const CHANGES: u8 = 1 << 6;

const BROKER: u8 = KAFKA | CLIENT_CONFIG | TIMEOUTS | REPORT | LOGS;
const SCHEMA: u8 = REGISTRY | CLIENT_CONFIG | TIMEOUTS | REPORT | LOGS;
const LOCAL: u8 = REPORT | LOGS;
const ALL: u8 = BROKER | SCHEMA | CHANGES;

/// The group of each shared flag, by clap id (the field name in `global.rs`).
const FLAG_GROUPS: &[(&str, u8)] = &[
    ("bootstrap_server", KAFKA),
    ("overrides", KAFKA),
    ("client_id", KAFKA),
    ("command_config", CLIENT_CONFIG),
    ("request_timeout_ms", TIMEOUTS),
    ("timeout", TIMEOUTS),
    ("registry", REGISTRY),
    ("registry_user", REGISTRY),
    ("registry_password_file", REGISTRY),
    ("output", REPORT),
    ("verbose", LOGS),
    ("quiet", LOGS),
    ("log_format", LOGS),
    ("dry_run", CHANGES),
    ("yes", CHANGES),
];

/// The groups each leaf command uses, by its path below the root. A command that is not
/// listed shows every shared flag (and a test fails until it is listed here).
pub const COMMAND_GROUPS: &[(&str, u8)] = &[
    ("run", ALL),
    ("tail", ALL),
    ("produce", ALL),
    ("demo", LOCAL),
    ("dev-cluster", LOCAL),
    ("barrier list", BROKER | CHANGES),
    ("barrier show", BROKER),
    ("barrier watch", BROKER),
    ("barrier verify", BROKER),
    ("barrier decode", LOCAL),
    ("schema prewarm", SCHEMA | CHANGES),
    ("schema inspect subjects", SCHEMA),
    ("schema inspect versions", SCHEMA),
    ("schema inspect get", SCHEMA),
    ("schema inspect id", SCHEMA),
    ("schema inspect id-usage", SCHEMA),
    ("schema inspect compatibility", SCHEMA),
    ("schema decode", SCHEMA),
    ("schema check", SCHEMA),
    ("leader run", BROKER | CHANGES),
    ("leader status", BROKER),
    ("leader list", BROKER),
    ("leader watch", BROKER),
    ("leader resign", BROKER | CHANGES),
    ("leader deregister", BROKER | CHANGES),
    // With `--state-topic` these read (and restore, prune write) a state topic, so
    // their help lists the broker flags that say which cluster.
    ("snapshot list", BROKER),
    ("snapshot verify", BROKER),
    ("snapshot dump", BROKER | CHANGES),
    ("snapshot restore", BROKER | CHANGES),
    ("snapshot prune", BROKER | CHANGES),
    ("snapshot restore-cut", BROKER | CHANGES),
    ("snapshot copy", BROKER | CHANGES),
    ("completions", 0),
];

/// The groups a command path uses: its own entry, or for a command with subcommands the
/// union of its subcommands' (so `barrier --help` lists what some `barrier` command reads).
pub fn groups_of(path: &str) -> u8 {
    if let Some((_, groups)) = COMMAND_GROUPS.iter().find(|(p, _)| *p == path) {
        return *groups;
    }
    let prefix = format!("{path} ");
    let children = COMMAND_GROUPS
        .iter()
        .filter(|(p, _)| p.starts_with(&prefix))
        .fold(None, |acc: Option<u8>, (_, g)| Some(acc.unwrap_or(0) | g));
    children.unwrap_or(ALL)
}

/// The root command with each subcommand's shared flags shown or hidden per [`COMMAND_GROUPS`].
pub fn apply(root: Command) -> Command {
    let shared = shared_flags(&root);
    each_subcommand(root, &|sub, path| {
        let uses = groups_of(path);
        shared.iter().fold(sub, |sub, (arg, group)| {
            sub.arg(arg.clone().hide(arg.is_hide_set() || uses & group == 0))
        })
    })
}

/// For completion scripts: each command offers only the shared flags it uses. The shells'
/// generators list hidden flags too, so here the shared flags are not global at all and
/// each command gets a copy of just the ones it uses. Only scripts are generated from this
/// command; the binary parses with [`apply`]'s, which accepts every shared flag anywhere.
pub fn for_completion(root: Command) -> Command {
    let shared = shared_flags(&root);
    let root = shared.iter().fold(root, |root, (arg, _)| {
        root.mut_arg(arg.get_id().as_str(), |a| a.global(false))
    });
    each_subcommand(root, &|sub, path| {
        let uses = groups_of(path);
        shared
            .iter()
            .filter(|(arg, group)| uses & group != 0 && !arg.is_hide_set())
            .fold(sub, |sub, (arg, _)| sub.arg(arg.clone().global(false)))
    })
}

fn shared_flags(root: &Command) -> Vec<(clap::Arg, u8)> {
    root.get_arguments()
        .filter(|a| a.is_global_set())
        .map(|a| {
            let group = FLAG_GROUPS
                .iter()
                .find(|(id, _)| *id == a.get_id().as_str())
                .map_or(ALL, |(_, g)| *g);
            (a.clone(), group)
        })
        .collect()
}

/// Applies `f` to every command below the root, with its path (`"snapshot list"`).
fn each_subcommand(root: Command, f: &dyn Fn(Command, &str) -> Command) -> Command {
    let names: Vec<String> = root
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    names.into_iter().fold(root, |root, name| {
        root.mut_subcommand(name.clone(), |sub| visit(sub, &name, f))
    })
}

fn visit(cmd: Command, path: &str, f: &dyn Fn(Command, &str) -> Command) -> Command {
    let cmd = f(cmd, path);
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    names.into_iter().fold(cmd, |cmd, name| {
        let child = format!("{path} {name}");
        cmd.mut_subcommand(name, |sub| visit(sub, &child, f))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn leaf_paths(cmd: &Command, path: &str, out: &mut Vec<String>) {
        let subs: Vec<&Command> = cmd
            .get_subcommands()
            .filter(|s| s.get_name() != "help" && !s.is_hide_set())
            .collect();
        if subs.is_empty() && !path.is_empty() {
            out.push(path.to_owned());
        }
        for sub in subs {
            let child = if path.is_empty() {
                sub.get_name().to_owned()
            } else {
                format!("{path} {}", sub.get_name())
            };
            leaf_paths(sub, &child, out);
        }
    }

    #[test]
    fn every_command_says_which_shared_flags_it_uses() {
        let mut leaves = Vec::new();
        leaf_paths(&crate::cmd::Cli::command(), "", &mut leaves);
        let missing: Vec<&String> = leaves
            .iter()
            .filter(|p| !COMMAND_GROUPS.iter().any(|(q, _)| q == p))
            .collect();
        assert!(missing.is_empty(), "not in COMMAND_GROUPS: {missing:?}");
        let stale: Vec<&str> = COMMAND_GROUPS
            .iter()
            .map(|(p, _)| *p)
            .filter(|p| !leaves.iter().any(|l| l == p))
            .collect();
        assert!(stale.is_empty(), "no such command: {stale:?}");
        for (id, _) in FLAG_GROUPS {
            assert!(
                crate::cmd::Cli::command()
                    .get_arguments()
                    .any(|a| a.get_id().as_str() == *id && a.is_global_set()),
                "{id} is not a global flag"
            );
        }
    }

    fn shown(path: &[&str]) -> Vec<String> {
        let mut cmd = crate::cmd::cli_command();
        cmd.build();
        let mut node = &cmd;
        for name in path {
            node = node.find_subcommand(name).expect("subcommand");
        }
        node.get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter_map(|a| a.get_long().map(str::to_owned))
            .collect()
    }

    #[test]
    fn a_command_shows_only_the_shared_flags_it_reads() {
        let tail = shown(&["tail"]);
        for flag in [
            "bootstrap-server",
            "registry",
            "timeout",
            "output",
            "dry-run",
        ] {
            assert!(tail.contains(&flag.to_owned()), "tail lacks --{flag}");
        }
        // `snapshot list --state-topic` reads a broker: its help says which flags.
        let list = shown(&["snapshot", "list"]);
        for flag in ["bootstrap-server", "command-config", "timeout"] {
            assert!(
                list.contains(&flag.to_owned()),
                "snapshot list lacks --{flag}"
            );
        }
        for flag in ["registry", "dry-run", "yes"] {
            assert!(
                !list.contains(&flag.to_owned()),
                "snapshot list shows --{flag}"
            );
        }
        let prune = shown(&["snapshot", "prune"]);
        for flag in ["bootstrap-server", "dry-run", "yes"] {
            assert!(
                prune.contains(&flag.to_owned()),
                "snapshot prune lacks --{flag}"
            );
        }
        let decode = shown(&["barrier", "decode"]);
        for flag in ["bootstrap-server", "registry", "command-config", "dry-run"] {
            assert!(
                !decode.contains(&flag.to_owned()),
                "barrier decode shows --{flag}"
            );
        }
        assert!(list.contains(&"output".to_owned()));
        let completions = shown(&["completions"]);
        assert_eq!(
            completions,
            ["help", "version"],
            "completions shows {completions:?}"
        );
        let schema = shown(&["schema", "decode"]);
        assert!(schema.contains(&"registry".to_owned()));
        assert!(!schema.contains(&"bootstrap-server".to_owned()));
        let barrier = shown(&["barrier"]);
        assert!(barrier.contains(&"bootstrap-server".to_owned()));
        assert!(!barrier.contains(&"registry".to_owned()));
    }

    #[test]
    fn hidden_shared_flags_are_still_accepted_anywhere() {
        let cli = crate::cmd::parse(
            [
                "krabka-streams",
                "snapshot",
                "list",
                "-b",
                "h:1",
                "--registry",
                "http://r",
                "/tmp",
            ]
            .map(std::ffi::OsString::from),
        )
        .map_err(|(e, _)| e.to_string())
        .expect("parses");
        assert_eq!(
            cli.global.connection.bootstrap_server.as_deref(),
            Some("h:1")
        );
        assert_eq!(cli.global.registry.registry.as_deref(), Some("http://r"));
        let cli = crate::cmd::parse(
            [
                "krabka-streams",
                "-b",
                "h:2",
                "tail",
                "t",
                "--timeout",
                "3s",
            ]
            .map(std::ffi::OsString::from),
        )
        .map_err(|(e, _)| e.to_string())
        .expect("parses");
        assert_eq!(
            cli.global.connection.bootstrap_server.as_deref(),
            Some("h:2")
        );
        assert_eq!(
            cli.global.connection.timeout,
            std::time::Duration::from_secs(3)
        );
    }
}
