//! `krabka-streams dev-cluster` on a free port, killed on drop: the embedded cluster
//! Debian's kcat can talk to (it cannot talk to Tansu), shared by the kcat
//! comparisons of `tail` and `produce`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use super::binary;
use super::tansu::free_port;

pub struct DevCluster {
    child: Child,
    pub bootstrap: String,
}

impl Drop for DevCluster {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `dev-cluster` with `topics` (`NAME:PARTITIONS`) and waits for its
/// `BOOTSTRAP=` line.
pub fn dev_cluster(topics: &[&str]) -> DevCluster {
    let port = free_port().to_string();
    let mut args = vec!["dev-cluster", "--port", &port];
    for t in topics {
        args.extend(["--topic", t]);
    }
    let mut child = Command::new(binary())
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start dev-cluster");
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let bootstrap = first
        .trim()
        .strip_prefix("BOOTSTRAP=")
        .unwrap_or_else(|| panic!("dev-cluster said {first:?}"))
        .to_owned();
    DevCluster { child, bootstrap }
}
