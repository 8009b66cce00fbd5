//! `simrob`: the multi-robot simulator's command-line entry point (the library's
//! [`simrob_cli::main_with_args`] with this process's arguments).

fn main() -> std::process::ExitCode {
    simrob_cli::main_with_args(std::env::args_os())
}
