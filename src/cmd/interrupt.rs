//! Ctrl-C (SIGINT) and SIGTERM end every command the same way (cli-conventions §A
//! "Cancel"): exit 130 with the cancelled message, nothing half-written.
//!
//! One process-wide listener ([`install_process_handler`], called by `dispatch`
//! before any command runs) decides what a signal does:
//!
//! * while some part of the command cooperates ([`cooperate`]: `tail` once it
//!   polls, online runs, `barrier watch`, `leader`, `dev-cluster`), the signal
//!   only raises their flags; they stop between steps, close their outputs and end
//!   as they document;
//! * otherwise (an offline `run` writing Parquet, `tail` before it connected, a
//!   FIFO input waiting for its writer, any other command) the listener removes
//!   the temp files of outputs not yet published (`io::atomic_file`), so each
//!   previous target stays as it was, flushes a registered producer (`produce`
//!   blocked on its input: `io::kafka::exit_flush`, at most 10 s, saying what it could
//!   not deliver), prints the cancelled message and exits 130.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::OutputMode;

/// The flags of the parts that cooperate, by registration id. Weak: a part that
/// ended (its flag dropped) no longer holds signals back, even when nothing
/// unregistered it.
static COOPERATING: Mutex<Vec<(u64, Weak<AtomicBool>)>> = Mutex::new(Vec::new());
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static INSTALLED: OnceLock<()> = OnceLock::new();

/// While alive, signals raise `flag` instead of ending the process.
pub struct Cooperation {
    id: u64,
    _flag: Arc<AtomicBool>,
}

impl Drop for Cooperation {
    fn drop(&mut self) {
        if let Ok(mut list) = COOPERATING.lock() {
            list.retain(|(id, _)| *id != self.id);
        }
    }
}

fn register(flag: &Arc<AtomicBool>) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut list) = COOPERATING.lock() {
        list.retain(|(_, f)| f.strong_count() > 0);
        list.push((id, Arc::downgrade(flag)));
    }
    id
}

/// Registers `flag` to be raised by SIGINT/SIGTERM while the returned guard lives.
pub fn cooperate(flag: Arc<AtomicBool>) -> Cooperation {
    Cooperation {
        id: register(&flag),
        _flag: flag,
    }
}

/// Registers `flag` to be raised by SIGINT/SIGTERM for as long as its owner keeps
/// it: for a part that cannot hold a guard (a `tail` started through the ops
/// layer's host), whose flag is dropped when it ends. After that a signal ends the
/// process again (a demo's later steps stay cancellable).
pub fn cooperate_while_alive(flag: &Arc<AtomicBool>) {
    register(flag);
}

/// The flags of the parts cooperating now.
fn live_flags() -> Vec<Arc<AtomicBool>> {
    match COOPERATING.lock() {
        Ok(list) => list.iter().filter_map(|(_, f)| f.upgrade()).collect(),
        Err(_) => Vec::new(),
    }
}

/// What the listener does with one signal: raise the cooperating flags, or end
/// the process (see the module rules).
fn on_signal(mode: OutputMode, command: &str) {
    let flags = live_flags();
    if !flags.is_empty() {
        for f in flags {
            f.store(true, Ordering::SeqCst);
        }
        return;
    }
    crate::io::atomic_file::remove_unpublished();
    if let Some(left) =
        crate::io::kafka::exit_flush::flush_registered(std::time::Duration::from_secs(10))
    {
        if left > 0 {
            eprintln!(
                "krabka-streams {command}: {left} records handed to the producer were not delivered within 10 s; they are lost"
            );
        } else {
            eprintln!(
                "krabka-streams {command}: every record handed to the producer before the signal was delivered"
            );
        }
    }
    crate::cmd::output::print_error(mode, command, &CliError::cancelled());
    std::process::exit(crate::cmd::exit::code(
        crate::cmd::exit::ExitCode::Cancelled,
    ));
}

/// Starts the process-wide listener once. If it cannot start (no thread, no
/// runtime), signals keep their default action.
pub fn install_process_handler(mode: OutputMode, command: &'static str) {
    if INSTALLED.set(()).is_err() {
        return;
    }
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    // Registered before returning, so a signal right after is caught.
    let Ok((mut int, mut term)) = runtime.block_on(async {
        use tokio::signal::unix::{SignalKind, signal};
        Ok::<_, std::io::Error>((
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        ))
    }) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            runtime.block_on(async {
                loop {
                    tokio::select! {
                        _ = int.recv() => {},
                        _ = term.recv() => {},
                    }
                    on_signal(mode, command);
                }
            });
        });
}

/// Set once SIGINT or SIGTERM arrived, for long-running commands that stop
/// between steps; while an `Interrupt` lives, signals do not end the process.
#[derive(Clone)]
pub struct Interrupt {
    flag: Arc<AtomicBool>,
    _cooperation: Arc<Cooperation>,
}

impl std::fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interrupt")
            .field("set", &self.is_set())
            .finish()
    }
}

impl Interrupt {
    /// Starts listening (the process-wide listener, if `dispatch` has not already).
    pub fn install() -> CliResult<Self> {
        install_process_handler(OutputMode::Human, "");
        let flag = Arc::new(AtomicBool::new(false));
        let cooperation = cooperate(flag.clone());
        Ok(Interrupt {
            flag,
            _cooperation: Arc::new(cooperation),
        })
    }

    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
}

/// SIGINT or SIGTERM as the normal end of a command that serves until stopped
/// (exit 0): listening starts at [`StopSignal::listen`], so a signal that arrives
/// while the command is still starting is not lost, nor taken for a cancellation
/// (this module).
pub struct StopSignal {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    _cooperation: Cooperation,
}

impl StopSignal {
    pub fn listen() -> StopSignal {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        StopSignal {
            _cooperation: cooperate(stop.clone()),
            stop,
        }
    }

    /// Blocks until the signal (checked every 50 ms).
    pub fn wait(self) -> crate::cmd::exit::CliResult<()> {
        while !self.stop.load(std::sync::atomic::Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered(flag: &Arc<AtomicBool>) -> bool {
        live_flags().iter().any(|f| Arc::ptr_eq(f, flag))
    }

    #[test]
    fn a_part_cooperates_while_it_holds_its_flag_or_its_guard() {
        let tail = Arc::new(AtomicBool::new(false));
        cooperate_while_alive(&tail);
        assert!(registered(&tail));
        let weak = Arc::downgrade(&tail);
        drop(tail);
        // The tail is over: signals end the process again.
        assert!(weak.upgrade().is_none());
        let guarded = Arc::new(AtomicBool::new(false));
        let guard = cooperate(guarded.clone());
        assert!(registered(&guarded));
        drop(guard);
        assert!(!registered(&guarded));
    }
}
