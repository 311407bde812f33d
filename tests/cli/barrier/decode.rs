//! `barrier decode`: golden vectors decode offline; malformed bytes give the exact strict error.

use super::fixture::{assert_code, json_data, run, stderr, stdout};

const GOLDEN_KEY: &str = "00000002000a6f72646572732d6375740000000000000007";
const GOLDEN_VALUE: &str = "0000000001918435bd00000001918435bd2a000000000100066f72646572730000000200000000000000000000040000000001000000000000080000000000";

#[test]
fn a_golden_cut_decodes_to_its_fields() {
    let out = run(&[
        "--output",
        "json",
        "barrier",
        "decode",
        "--key",
        GOLDEN_KEY,
        "--value",
        GOLDEN_VALUE,
    ]);
    assert_code(&out, 0);
    let data = json_data(&out);
    assert_eq!(data["key"]["kind_name"], "cut");
    assert_eq!(data["key"]["group"], "orders-cut");
    assert_eq!(data["value"]["status"], "complete");
    assert_eq!(data["value"]["completed_at"], "2024-08-24T11:46:40.042Z");
    assert_eq!(data["value"]["topics"][0]["partitions"][1]["offset"], 2048);
}

#[test]
fn group_injection_tombstone_and_unknown_kinds_decode_for_display() {
    let group = run(&[
        "barrier",
        "decode",
        "--key",
        "0000000000056175646974ffffffffffffffff",
        "--value",
        "000000000000ffffffffffffffff000000030000000000000004",
    ]);
    assert_code(&group, 0);
    assert!(
        stdout(&group).contains("value: group definition"),
        "{}",
        stdout(&group)
    );
    assert!(
        stdout(&group).contains("last epoch:    4"),
        "{}",
        stdout(&group)
    );

    let injection = run(&[
        "barrier",
        "decode",
        "--key",
        "00000001000561756469740000000000000007",
        "--value",
        "0x0000 0000 0002 000000000000000b 00000000",
    ]);
    assert_code(&injection, 0);
    assert!(
        stdout(&injection).contains("coordinator epoch: 2"),
        "{}",
        stdout(&injection)
    );

    let tombstone = run(&[
        "barrier",
        "decode",
        "--key",
        "00000002000561756469740000000000000008",
        "--value",
        "",
    ]);
    assert_code(&tombstone, 0);
    assert!(
        stdout(&tombstone).contains("value: tombstone"),
        "{}",
        stdout(&tombstone)
    );

    let unknown = run(&[
        "barrier",
        "decode",
        "--key",
        "00000009000561756469740000000000000008",
        "--value",
        "ff",
    ]);
    assert_code(&unknown, 0);
    assert!(
        stdout(&unknown).contains("unknown kind (kind 9)"),
        "{}",
        stdout(&unknown)
    );
}

#[test]
fn malformed_bytes_exit_1_with_the_exact_strict_error() {
    for (key, value, message) in [
        ("00", None, "truncated barrier state key"),
        (
            "00010002000a6f72646572732d6375740000000000000007",
            None,
            "unsupported barrier state key version 1",
        ),
        (
            "00000002ffff0000000000000007",
            None,
            "negative string length -1 in barrier state key",
        ),
        (
            "000000020001ff0000000000000007",
            None,
            "non-UTF-8 string in barrier state key",
        ),
        (GOLDEN_KEY, Some("00"), "truncated barrier state cut value"),
        (
            GOLDEN_KEY,
            Some("00000000000000000001000000000000000202000000000000000000"),
            "unknown barrier cut status 2",
        ),
        (
            GOLDEN_KEY,
            Some("00000000000000000001000000000000000200ffffffff"),
            "negative array length -1 in barrier state cut value",
        ),
    ] {
        let mut args = vec!["barrier", "decode", "--key", key];
        if let Some(value) = value {
            args.extend(["--value", value]);
        }
        let out = run(&args);
        assert_code(&out, 1);
        assert_eq!(
            stderr(&out),
            format!("krabka-streams barrier decode: {message}\n")
        );
    }
    let trailing = format!("{GOLDEN_VALUE}00");
    let out = run(&[
        "barrier", "decode", "--key", GOLDEN_KEY, "--value", &trailing,
    ]);
    assert_eq!(
        stderr(&out),
        "krabka-streams barrier decode: trailing bytes in barrier state cut value\n"
    );
}

#[test]
fn markers_decode_from_files_and_a_wrong_control_type_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key.bin");
    let value = dir.path().join("value.bin");
    std::fs::write(&key, hex::decode("000003e8").unwrap()).unwrap();
    std::fs::write(
        &value,
        hex::decode("0000000a6f72646572732d6375740000000000000007000001918435bd00").unwrap(),
    )
    .unwrap();
    let out = run(&[
        "barrier",
        "decode",
        "--marker",
        "--key-file",
        key.to_str().unwrap(),
        "--value-file",
        value.to_str().unwrap(),
    ]);
    assert_code(&out, 0);
    assert!(
        stdout(&out)
            .contains("value: group orders-cut, epoch 7, triggered 2024-08-24T11:46:40.000Z"),
        "{}",
        stdout(&out)
    );
    let commit = run(&["barrier", "decode", "--marker", "--key", "00000001"]);
    assert_code(&commit, 1);
    assert!(stderr(&commit).contains("unexpected control type 1 in barrier marker key"));
}

#[test]
fn bad_hex_is_usage_and_an_unreadable_file_is_a_failure() {
    let bad = run(&["barrier", "decode", "--key", "0g"]);
    assert_code(&bad, 2);
    assert!(
        stderr(&bad).contains("--key is not hex"),
        "{}",
        stderr(&bad)
    );
    let missing = run(&["barrier", "decode", "--key-file", "/nonexistent/key.bin"]);
    assert_code(&missing, 1);
    assert!(stderr(&missing).contains("cannot read --key-file /nonexistent/key.bin"));
    let none = run(&["barrier", "decode"]);
    assert_code(&none, 2);
}
