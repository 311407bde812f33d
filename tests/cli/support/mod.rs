//! Helpers shared by the end-to-end tests: real servers and unique names.

pub mod admin;
pub mod checked_producer;
pub mod dev_cluster;
pub mod object_store;
pub mod orders_totals;
pub mod process;
pub mod registered_orders;
pub mod sasl_front;
pub mod small_disk;
pub mod tansu;
pub mod tcp_proxy;
pub mod tls_proxy;
pub mod topic_read;
pub mod txn_front;
pub mod txn_log;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A name no other test (in this run or a parallel one) uses: topics, groups, transactional ids.
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}-{}-{nanos:x}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The binary under test: `$KRABKA_STREAMS_BIN` when set (a copy that a concurrent
/// build into a shared target directory cannot replace mid-run), else Cargo's.
pub fn binary() -> PathBuf {
    std::env::var_os("KRABKA_STREAMS_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_krabka-streams")))
}

/// Runs a Python check in the test venv (pyarrow, duckdb, … as CI installs them) with `args`;
/// the script prints one JSON document.
pub fn venv_python<S: AsRef<std::ffi::OsStr>>(script: &str, args: &[S]) -> serde_json::Value {
    let python = tansu::test_venv().join("bin").join("python");
    let out = std::process::Command::new(&python)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; run scripts/test", python.display()));
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
