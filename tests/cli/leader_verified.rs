//! `leader status --expect-token` against a broker that answers DescribeTransactions:
//! Tansu behind the test support's Kafka-protocol front (support/txn_front.rs), which
//! answers it from the epochs the broker minted. The verified path exits 0 when the
//! token is the broker's current epoch and 3 when it is not — the paths no plain test
//! broker can reach (without DescribeTransactions the answer is `unverified`, exit 4).

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::tansu::Tansu;
use crate::support::txn_front::TxnFront;
use crate::support::{binary, unique_name};

struct Leader(Child);

impl Drop for Leader {
    fn drop(&mut self) {
        // The member runs in its own process group: stop it and its command together.
        unsafe {
            libc::kill(-(self.0.id() as i32), libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

fn status(bootstrap: &str, topic: &str, role: &str, token: &str) -> Output {
    Command::new(binary())
        .args(["-b", bootstrap, "--timeout", "20s", "leader", "status"])
        .args(["--role", role, "--topic", topic, "--expect-token", token])
        .args(["--lease", "3s", "--renew", "1s", "--stagger", "1s"])
        .stdin(Stdio::null())
        .output()
        .expect("run leader status")
}

fn wait_for_token(file: &Path, leader: &mut Leader) -> String {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Some(line) = text.lines().next().filter(|l| l.contains(':'))
        {
            return line.trim().to_string();
        }
        assert!(
            leader.0.try_wait().unwrap().is_none(),
            "leader run exited before its command ran"
        );
        assert!(Instant::now() < until, "no token within 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_token_is_verified_against_the_broker_epoch_exit_0_when_held_and_3_when_not() {
    let mut front = TxnFront::bind();
    let broker = Tansu::start_with(Some(front.port()), &[]);
    front.serve(broker.addr());
    let bootstrap = format!("127.0.0.1:{}", front.port());
    let (topic, role) = (unique_name("coord"), unique_name("role"));
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    let script = format!(
        "echo \"$KRABKA_LEADER_TOKEN\" > {}; exec sleep 600",
        token_file.display()
    );
    let mut leader = Leader(
        Command::new(binary())
            .args([
                "-b", &bootstrap, "leader", "run", "--role", &role, "--member", "a",
            ])
            .args([
                "--topic",
                &topic,
                "--lease",
                "3s",
                "--renew",
                "1s",
                "--stagger",
                "1s",
            ])
            .args(["--poll", "1s", "--grace", "2s", "--create-topic", "--"])
            .args(["sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start leader run"),
    );
    let token = wait_for_token(&token_file, &mut leader);
    let (pid, epoch) = token.split_once(':').unwrap();
    let epoch: i16 = epoch.parse().unwrap();

    let held = status(&bootstrap, &topic, &role, &token);
    let stderr = String::from_utf8_lossy(&held.stderr);
    assert_eq!(held.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("unverified"), "{stderr}");

    // Another epoch of the same producer, or another producer: not the broker's
    // epoch, a failed check.
    let pid: i64 = pid.parse().unwrap();
    for other in [
        format!("{pid}:{}", epoch + 1),
        format!("{}:{epoch}", pid + 1),
    ] {
        let stale = status(&bootstrap, &topic, &role, &other);
        let stderr = String::from_utf8_lossy(&stale.stderr);
        assert_eq!(stale.status.code(), Some(3), "{other}: {stderr}");
        assert!(
            stderr.contains(&format!("token {other} is not the authoritative epoch")),
            "{other}: {stderr}"
        );
    }
    drop(leader);
}
