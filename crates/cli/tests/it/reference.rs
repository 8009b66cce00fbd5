//! The command-line reference in the docs (`docs/reference/cli-help.md`) is generated from the
//! binaries' own `--help`, so it cannot drift: this test walks every subcommand and fails when
//! the page differs. `SIMROB_UPDATE_DOCS=1 cargo test -p simrob --test it reference` rewrites it.

use std::path::PathBuf;
use std::process::Command;

/// The `--help` text of `bin` with the given subcommand path.
fn help(bin: &str, path: &[String]) -> String {
    let out = Command::new(bin)
        .args(path)
        .arg("--help")
        .env("NO_COLOR", "1")
        .output()
        .expect("run --help");
    assert!(out.status.success(), "{path:?} --help failed");
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// The subcommands listed under `Commands:` in a help text (without `help`).
fn subcommands(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| l.trim_end() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

fn walk(bin: &str, name: &str, path: &mut Vec<String>, page: &mut String) {
    let text = help(bin, path);
    let title = std::iter::once(name.to_owned())
        .chain(path.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    page.push_str(&format!(
        "## {title}\n\n```text\n{}\n```\n\n",
        text.trim_end()
    ));
    for sub in subcommands(&text) {
        path.push(sub);
        walk(bin, name, path, page);
        path.pop();
    }
}

#[test]
fn the_command_line_reference_is_what_the_binaries_print() {
    let mut page = String::from(
        "# Every command's help\n\n\
         What `--help` prints for every command and subcommand of `simrob` and for `simrob-load`,\n\
         generated from the binaries (`SIMROB_UPDATE_DOCS=1 cargo test -p simrob --test it reference`\n\
         rewrites this page; the test fails when it is out of date). The\n\
         [command-line overview](cli.md) says which guide covers each command.\n\n",
    );
    walk(
        env!("CARGO_BIN_EXE_simrob"),
        "simrob",
        &mut Vec::new(),
        &mut page,
    );
    walk(
        env!("CARGO_BIN_EXE_simrob-load"),
        "simrob-load",
        &mut Vec::new(),
        &mut page,
    );
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference/cli-help.md");
    if std::env::var_os("SIMROB_UPDATE_DOCS").is_some() {
        std::fs::write(&file, &page).expect("write the reference page");
        return;
    }
    let committed = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        committed == page,
        "docs/reference/cli-help.md is out of date: run \
         SIMROB_UPDATE_DOCS=1 cargo test -p simrob --test it reference"
    );
}
