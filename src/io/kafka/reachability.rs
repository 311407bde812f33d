//! A dead broker fails fast: before the first client of a process is created, each
//! bootstrap address is tried with a plain TCP connect. When every address refuses
//! the connection (nothing listens there) for a short grace period, the command ends
//! at once with exit 4 instead of letting librdkafka retry for the whole `--timeout`
//! and log every attempt. Anything else — a connection accepted, a connect that times
//! out, a name that does not resolve — is left to the client, whose `--timeout` stays
//! the bound for brokers that accept and then say nothing.

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::io::kafka::error::KafkaIoError;

/// How long every address must keep refusing: a broker being restarted may refuse
/// for a moment; one that is simply not there refuses every time.
const GRACE: Duration = Duration::from_secs(3);
/// Pause between rounds of connects.
const RETRY_EVERY: Duration = Duration::from_millis(250);
/// One connect attempt's bound (a refusal is immediate; a filtered port is not ours to judge).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// Bootstrap lists already found reachable in this process (probed once each).
static REACHABLE: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// What one round of connects found.
#[derive(Debug, PartialEq, Eq)]
enum Round {
    /// Something accepted, or a result that is not a refusal: let the client try.
    NotRefused,
    /// Every address refused; the addresses tried.
    AllRefused(Vec<SocketAddr>),
}

/// `host:port` of each bootstrap entry (an optional `PROTOCOL://` prefix dropped);
/// `None` when an entry cannot be read (then no judgement is made).
fn entries(bootstrap: &str) -> Option<Vec<String>> {
    let list: Vec<String> = bootstrap
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| e.rsplit_once("://").map_or(e, |(_, rest)| rest).to_string())
        .collect();
    (!list.is_empty() && list.iter().all(|e| e.rsplit_once(':').is_some())).then_some(list)
}

fn round(entries: &[String]) -> Round {
    let mut refused = Vec::new();
    for entry in entries {
        let Ok(addrs) = entry.to_socket_addrs() else {
            return Round::NotRefused;
        };
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => refused.push(addr),
                _ => return Round::NotRefused,
            }
        }
    }
    if refused.is_empty() {
        Round::NotRefused
    } else {
        Round::AllRefused(refused)
    }
}

/// Fails with an unreachable error (exit 4) when every address of `bootstrap` keeps
/// refusing connections for [`GRACE`]; otherwise returns at the first sign of life.
pub fn refuse_dead_bootstrap(bootstrap: &str) -> Result<(), KafkaIoError> {
    let Some(list) = entries(bootstrap) else {
        return Ok(());
    };
    let known = |b: &str| {
        REACHABLE
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|r| r == b)
    };
    if known(bootstrap) {
        return Ok(());
    }
    let start = Instant::now();
    loop {
        match round(&list) {
            Round::NotRefused => {
                REACHABLE
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(bootstrap.to_string());
                return Ok(());
            }
            Round::AllRefused(addrs) if start.elapsed() >= GRACE => {
                let tried: Vec<String> = addrs.iter().map(SocketAddr::to_string).collect();
                return Err(KafkaIoError::unreachable(format!(
                    "no broker at {bootstrap}: every bootstrap address refused the connection for {}s ({}): is the broker running, and is -b / bootstrap.servers right?",
                    GRACE.as_secs(),
                    tried.join(", ")
                )));
            }
            Round::AllRefused(_) => std::thread::sleep(RETRY_EVERY),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port nobody listens on: bound, then closed.
    fn dead_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    #[test]
    fn bootstrap_entries_drop_protocols_and_refuse_nonsense() {
        assert_eq!(
            entries("PLAINTEXT://a:9092, b:9093"),
            Some(vec!["a:9092".to_string(), "b:9093".to_string()])
        );
        assert_eq!(entries(""), None);
        assert_eq!(entries("no-port"), None);
    }

    #[test]
    fn a_refusing_address_fails_after_the_grace_and_a_listening_one_passes() {
        let dead = format!("127.0.0.1:{}", dead_port());
        let started = Instant::now();
        let e = refuse_dead_bootstrap(&dead).unwrap_err();
        assert!(e.unreachable);
        assert!(
            e.message.contains("refused the connection"),
            "{}",
            e.message
        );
        assert!(started.elapsed() >= GRACE);
        let live = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let live = live.local_addr().unwrap().to_string();
        refuse_dead_bootstrap(&format!("{dead},{live}")).unwrap();
    }
}
