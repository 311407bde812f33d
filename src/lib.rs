//! krabka-streams: the command-line face of the krabka streams libraries.
//!
//! `engine` holds everything that knows the frozen formats and semantics and
//! never touches a Kafka client, HTTP or the command line; `io` holds the
//! adapters (rdkafka, registry HTTP, files); `ops` holds the use cases, one module
//! per subcommand group, over the engine's traits and the adapters; `cmd` parses
//! arguments into an ops plan, calls it and renders the answer.

// Diagnostics never end a command: std's `eprintln!`/`eprint!` panic ("failed
// printing to stderr", exit 101) when stderr is closed or a pipe whose reader went
// away (`2>&1 >/dev/null | head -c 0`). These shadow them in every module below
// (textual scope wins over the prelude), dropping the write error so the command
// keeps its own exit code.
macro_rules! eprintln {
    () => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr());
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

pub mod cmd;
pub mod engine;
pub mod io;
pub mod ops;
