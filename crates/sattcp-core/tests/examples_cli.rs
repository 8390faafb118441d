//! The benchmark examples refuse bad arguments with a message naming what is wrong and exit
//! status 2 (never a panic), and `--help` prints their usage. `cargo test -p sattcp-core`
//! builds the examples next to this test's binary.

use std::path::PathBuf;
use std::process::{Command, Output};

/// target/<profile>/examples/NAME, beside this test's target/<profile>/deps/, if built:
/// `cargo test -p sattcp-core` (`make test`) builds the examples, `cargo test --test
/// examples_cli` alone does not (the test then says so and checks nothing).
fn example(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().expect("the test's own path");
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>/deps/");
    let path = dir.join("examples").join(name);
    if path.is_file() {
        Some(path)
    } else {
        eprintln!("skipped: {} is not built (`cargo test -p sattcp-core` or `cargo build -p sattcp-core --examples` builds it)", path.display());
        None
    }
}

fn run(path: &PathBuf, args: &[&str]) -> Output {
    Command::new(path)
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("the example runs")
}

/// Exit status 2, no panic, and a first stderr line that contains `says`.
fn refused(path: &PathBuf, args: &[&str], says: &str) {
    let name = path.file_name().expect("a file").to_string_lossy();
    let out = run(path, args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{name} {args:?}: exit status; stderr:\n{err}"
    );
    assert!(
        !err.contains("panicked"),
        "{name} {args:?} panicked:\n{err}"
    );
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("{name}: ")) && first.contains(says),
        "{name} {args:?}: first line {first:?} should name {says:?}"
    );
    assert!(
        out.stdout.is_empty(),
        "{name} {args:?}: printed before refusing:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn bench_refuses_bad_arguments_with_status_2() {
    let Some(b) = example("bench") else { return };
    let b = &b;
    refused(b, &["--bogus"], "unknown option \"--bogus\"");
    refused(b, &["--repeat"], "--repeat needs a value");
    refused(
        b,
        &["--repeat", "0"],
        "--repeat: \"0\" is not a whole number of at least 1",
    );
    refused(b, &["--scale", "--flows", "10,x"], "--flows: \"x\"");
    refused(
        b,
        &["--set", "run.duration"],
        "--set \"run.duration\": expected key=value",
    );
    refused(b, &["--kv"], "--kv needs at least one scenario file");
    refused(
        b,
        &["--scale", "scenarios/geo-bulk.toml"],
        "--scale runs its own dumbbell",
    );
    refused(b, &["--kv", "no/such.toml"], "no/such.toml");
    // Checked before anything runs: the bad value is named with its key.
    refused(
        b,
        &[
            "--kv",
            "scenarios/geo-bulk.toml",
            "--set",
            "run.duration=1q",
        ],
        "scenarios/geo-bulk.toml",
    );
    let err =
        String::from_utf8_lossy(&run(b, &["--scale", "--flows", "10", "--duration", "1q"]).stderr)
            .into_owned();
    assert!(
        err.contains("run.duration"),
        "the scaled scenario's error names the key:\n{err}"
    );
}

#[test]
fn bench_help_prints_its_usage() {
    let Some(b) = example("bench") else { return };
    let out = run(&b, &["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for form in ["bench --kv SCENARIO.toml", "bench --scale [--flows"] {
        assert!(text.contains(form), "usage lacks {form:?}:\n{text}");
    }
}

#[test]
fn memfloor_refuses_bad_arguments_with_status_2() {
    let Some(m) = example("memfloor") else { return };
    let m = &m;
    refused(m, &["--bogus"], "unknown argument \"--bogus\"");
    refused(m, &["--ahead", "1,2"], "--ahead takes one count");
    refused(m, &["--flows", "10,x"], "--flows");
}
