//! Permissions of the files the tool writes (RELIABILITY.md, Security): new files are
//! `0664` filtered by the umask — 0644 under the usual 022 — and never world-writable,
//! even under umask 000; a replaced file keeps its own bits (a private 0600 snapshot
//! stays private). Covers tail outputs (Parquet, NDJSON), dead letters, lossless dumps,
//! restored snapshots and the prewarm cache file.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use krabka_streams::engine::columnar::snapshot::container;
use krabka_streams::io::registry_server::RegistryServer;

use super::{create_topic, produce};
use crate::support::tansu::Tansu;
use crate::support::unique_name;

fn run_with_umask(umask: u32, args: &[&str]) {
    let mut cmd = Command::new(crate::support::binary());
    cmd.args(args)
        .stdin(Stdio::null())
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL");
    // SAFETY: umask(2) is async-signal-safe and touches no memory.
    unsafe {
        cmd.pre_exec(move || {
            libc::umask(umask as libc::mode_t);
            Ok(())
        });
    }
    let out = cmd.output().expect("run krabka-streams");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn written_files_follow_the_umask_are_never_world_writable_and_replacements_keep_their_bits() {
    let broker = Tansu::start();
    let topic = unique_name("perm");
    create_topic(&broker.bootstrap(), &topic, 1);
    produce(&broker.bootstrap(), &topic, 0..2);
    let registry = RegistryServer::start_default().unwrap();
    let b = broker.bootstrap();
    let url = registry.url();

    for umask in [0o022, 0o000, 0o077] {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let p = |n: &str| d.join(n).display().to_string();
        run_with_umask(
            umask,
            &["-b", &b, "tail", &topic, "-e", "--out", &p("x.parquet")],
        );
        run_with_umask(
            umask,
            &[
                "-b",
                &b,
                "tail",
                &topic,
                "-e",
                "--out",
                &p("x.ndjson"),
                "--value-format",
                "gzip+string",
                "--on-error",
                "dead-letter",
                &p("dead.jsonl"),
            ],
        );
        let entries = [("state".to_string(), vec![1u8, 2, 3])]
            .into_iter()
            .collect();
        std::fs::write(d.join("src.snapshot"), container::encode(&entries)).unwrap();
        run_with_umask(
            umask,
            &[
                "snapshot",
                "dump",
                &p("src.snapshot"),
                "--lossless",
                "--out",
                &p("dump.json"),
            ],
        );
        run_with_umask(
            umask,
            &[
                "snapshot",
                "restore",
                "--from-json",
                &p("dump.json"),
                "--to",
                &p("new.snapshot"),
            ],
        );
        std::fs::write(d.join("private.snapshot"), b"old").unwrap();
        std::fs::set_permissions(d.join("private.snapshot"), PermissionsExt::from_mode(0o600))
            .unwrap();
        run_with_umask(
            umask,
            &[
                "--yes",
                "snapshot",
                "restore",
                "--from-json",
                &p("dump.json"),
                "--to",
                &p("private.snapshot"),
            ],
        );
        std::fs::write(d.join("s.avsc"), "\"string\"").unwrap();
        run_with_umask(
            umask,
            &[
                "--registry",
                &url,
                "schema",
                "prewarm",
                "--subject",
                "x-value",
                "--schema-file",
                &p("s.avsc"),
                "--write-cache",
                &p("cache.json"),
            ],
        );

        let want = 0o664 & !umask;
        for name in [
            "x.parquet",
            "x.ndjson",
            "dead.jsonl",
            "dump.json",
            "new.snapshot",
            "cache.json",
        ] {
            assert_eq!(
                mode(&d.join(name)),
                want,
                "{name} under umask {umask:03o}: {:o}",
                mode(&d.join(name))
            );
        }
        assert_eq!(
            mode(&d.join("private.snapshot")),
            0o600,
            "a replaced file keeps its bits"
        );
        for e in std::fs::read_dir(d).unwrap() {
            let path = e.unwrap().path();
            assert_eq!(
                mode(&path) & 0o002,
                0,
                "{} is world-writable",
                path.display()
            );
        }
    }
}
