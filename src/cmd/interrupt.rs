//! Ctrl-C (SIGINT) and SIGTERM as a flag for long-running commands: once installed, the
//! signals no longer kill the process; the command checks [`Interrupt::is_set`] between steps
//! and ends with exit 130 (cli-conventions §A "Cancel").

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::cmd::exit::{CliError, CliResult};

/// Set once SIGINT or SIGTERM arrived.
#[derive(Debug, Clone)]
pub struct Interrupt {
    flag: Arc<AtomicBool>,
}

impl Interrupt {
    /// Starts listening on a background thread.
    pub fn install() -> CliResult<Self> {
        let flag = Arc::new(AtomicBool::new(false));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| CliError::failure(format!("cannot start the signal runtime: {e}")))?;
        // Register both handlers before returning, so a signal right after install is caught.
        let (mut int, mut term) = runtime
            .block_on(async {
                use tokio::signal::unix::{SignalKind, signal};
                Ok::<_, std::io::Error>((
                    signal(SignalKind::interrupt())?,
                    signal(SignalKind::terminate())?,
                ))
            })
            .map_err(|e| CliError::failure(format!("cannot listen for signals: {e}")))?;
        let set = flag.clone();
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                runtime.block_on(async {
                    tokio::select! {
                        _ = int.recv() => {},
                        _ = term.recv() => {},
                    }
                });
                set.store(true, Ordering::SeqCst);
            })
            .map_err(|e| CliError::failure(format!("cannot start the signal thread: {e}")))?;
        Ok(Interrupt { flag })
    }

    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
}
