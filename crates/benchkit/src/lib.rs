//! What a benchmark run cost, read from Linux's `/proc`: the processor time of the whole
//! process ([`process_cpu`]) or of the calling thread ([`thread_cpu`]), and the process's
//! peak resident memory ([`peak_memory_mb`]); [`cpu_per`], processor time as a benchmark
//! prints it (`< x` below the clock's tick, never a measured 0); [`size_list`] and
//! [`seed_list`], the sizes and seeds a benchmark is asked to run (`10000,100000`,
//! `1..30`); [`one_run`], the arguments of a benchmark's child
//! process that runs one size (`PROGRAM --one 10000 60 …`), so that each size's processor
//! time and peak memory are its own; and [`exit_code`], a benchmark's exit status from what
//! its run returned.
//!
//! SimRob's benchmarks print these beside the wall clock, because on a machine shared with
//! other work the wall clock measures the machine's load as much as the run, while processor
//! time hardly moves. Each function returns `None` where `/proc` cannot be read (another
//! operating system, a sandbox); callers print that as unknown, never as zero.
//!
//! This crate is for benchmarks and examples only; it depends on `std` alone.
#![warn(missing_docs)]

/// The kernel's clock ticks a second for `/proc/self/stat` (`USER_HZ`): 100 on every Linux
/// platform.
const USER_HZ: f64 = 100.0;

/// Processor time this process has used so far, user and system, every thread counted, in
/// seconds (`/proc/self/stat`, in ticks of 10 ms).
pub fn process_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    parse_stat(&stat)
}

/// Processor time the calling thread has used so far, in seconds
/// (`/proc/thread-self/schedstat`, nanoseconds).
pub fn thread_cpu() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// Peak resident memory of this process so far, in MB of 2^20 bytes (`VmHWM` in
/// `/proc/self/status`).
pub fn peak_memory_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_peak_kb(&status).map(|kb| kb / 1024.0)
}

/// The sizes in a comma-separated list such as `10000,100000,1000000` (no spaces); an
/// entry that is not a whole number is an error.
pub fn size_list(text: &str) -> Result<Vec<usize>, SizeListError> {
    text.split(',')
        .map(|entry| {
            entry.parse().map_err(|_| SizeListError {
                entry: entry.into(),
            })
        })
        .collect()
}

/// An entry of a size list that is not a whole number. Its `Debug` is its message, as a
/// benchmark's `main` prints an error it returns with `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct SizeListError {
    entry: String,
}

impl std::fmt::Display for SizeListError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SIZES is a comma-separated list of whole numbers, such as 10000,100000: {:?} is not one",
            self.entry
        )
    }
}

impl std::fmt::Debug for SizeListError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for SizeListError {}

/// Positional argument `k` of a benchmark (`args` as `std::env::args()` gives them, the
/// program first) as a `T`, `None` when it is not given; `name` and `what` say what it must
/// be in the error, as `DURATION is simulated seconds, not "x"`.
pub fn arg<T: std::str::FromStr>(
    args: &[String],
    k: usize,
    name: &str,
    what: &str,
) -> Result<Option<T>, ArgError> {
    args.get(k)
        .map(|text| {
            text.parse().map_err(|_| ArgError {
                message: format!("{name} is {what}, not {text:?}"),
            })
        })
        .transpose()
}

/// The seeds a benchmark is asked to run: one (`7`), a comma-separated list (`1,5,9`) or an
/// inclusive range `FIRST..LAST` (`1..30`, FIRST at most LAST); `name` says which argument
/// in the error.
pub fn seed_list(name: &str, text: &str) -> Result<Vec<u64>, ArgError> {
    let wrong = |why: String| ArgError {
        message: format!(
            "{name} is a seed (7), seeds separated by commas (1,5,9) or a range FIRST..LAST \
             with FIRST at most LAST (1..30), all whole numbers; {why}"
        ),
    };
    let number = |entry: &str| {
        entry
            .parse::<u64>()
            .map_err(|_| wrong(format!("{entry:?} is not a whole number")))
    };
    if let Some((a, b)) = text.split_once("..") {
        let (first, last) = (number(a)?, number(b)?);
        if first > last {
            return Err(wrong(format!(
                "{text:?} runs backwards (write {last}..{first})"
            )));
        }
        return Ok((first..=last).collect());
    }
    text.split(',').map(number).collect()
}

/// What a benchmark's command line asks for: a run with these options, or its usage.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed<T> {
    /// Run with these options.
    Run(T),
    /// Print the usage (`--help` or `-h` was given).
    Help,
}

/// The options of a benchmark's command line read by `parsed`: on `--help`, prints `usage`
/// and exits 0; on a mistake, prints it after the program's `name` and exits 2.
pub fn options_or_exit<T>(name: &str, usage: &str, parsed: Result<Parsed<T>, String>) -> T {
    match parsed {
        Ok(Parsed::Run(options)) => options,
        Ok(Parsed::Help) => {
            print!("{usage}");
            std::process::exit(0);
        }
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::exit(2);
        }
    }
}

/// A benchmark's exit status from what its run returned: success, or the error printed after
/// the program's `name` (`name: error` on stderr) and failure.
pub fn exit_code<E: std::fmt::Display>(
    name: &str,
    result: Result<(), E>,
) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Whether a benchmark was asked for its usage (`--help` or `-h` among `args`, the program
/// first, as `std::env::args()` gives them).
pub fn help_asked(args: &[String]) -> bool {
    args.iter().skip(1).any(|a| a == "--help" || a == "-h")
}

/// The resolution of [`process_cpu`]: one clock tick, 10 ms. A run that took less than a
/// tick may read as 0.
pub const PROCESS_CPU_RESOLUTION: f64 = 1.0 / USER_HZ;

/// `cpu` seconds of [`process_cpu`] divided by `per` (simulated seconds, frames, …), with
/// `decimals` decimals, as a benchmark prints it; when `cpu` is less than the clock's tick
/// ([`PROCESS_CPU_RESOLUTION`]) it was too little to measure, and the text is `< x`, `x`
/// being one tick divided by `per` (at least the last decimal printed), never a measured 0.
/// Unknown (`NaN`) stays `NaN`.
pub fn cpu_per(cpu: f64, per: f64, decimals: usize) -> String {
    if cpu.is_nan() || cpu >= PROCESS_CPU_RESOLUTION / 2.0 {
        return format!("{:.*}", decimals, cpu / per);
    }
    let step = 10f64.powi(-(decimals as i32));
    // The bound rounded up to the decimals printed.
    let bound = ((PROCESS_CPU_RESOLUTION / per) / step).ceil().max(1.0) * step;
    format!("< {bound:.decimals$}")
}

/// The threads a benchmark runs on when not told: the machine's cores.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A benchmark's argument that does not parse ([`arg`]). Its `Debug` is its message.
#[derive(Clone, PartialEq, Eq)]
pub struct ArgError {
    message: String,
}

impl std::fmt::Display for ArgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::fmt::Debug for ArgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ArgError {}

/// The flag that makes a benchmark's process one child run: `PROGRAM --one ARG…`.
pub const ONE: &str = "--one";

/// The arguments after [`ONE`] when this process is a child run (`args` as
/// `std::env::args()` gives them, the program first), `None` when it is not.
pub fn one_run(args: &[String]) -> Option<OneRun<'_>> {
    (args.get(1).map(String::as_str) == Some(ONE)).then(|| OneRun {
        rest: args[2..].iter(),
    })
}

/// Runs this program again as one child run (`PROGRAM --one ARGS…`, read back by
/// [`one_run`]) and waits for it: its status, or the error that kept it from starting.
pub fn run_child<S: AsRef<std::ffi::OsStr>>(
    args: impl IntoIterator<Item = S>,
) -> std::io::Result<std::process::ExitStatus> {
    std::process::Command::new(std::env::current_exe()?)
        .arg(ONE)
        .args(args)
        .status()
}

/// A child run's arguments, taken in order.
#[derive(Debug, Clone)]
pub struct OneRun<'a> {
    rest: std::slice::Iter<'a, String>,
}

impl<'a> OneRun<'a> {
    /// The next argument as a `T`; `name` says which in the error when it is missing or
    /// does not parse.
    pub fn next<T: std::str::FromStr>(&mut self, name: &str) -> Result<T, OneRunError>
    where
        T::Err: std::fmt::Display,
    {
        let text = self.rest.next().ok_or_else(|| OneRunError {
            name: name.into(),
            problem: "missing".into(),
        })?;
        text.parse().map_err(|e: T::Err| OneRunError {
            name: name.into(),
            problem: format!("{text:?}: {e}"),
        })
    }

    /// The next argument as text, if there is one (an optional last argument).
    pub fn optional(&mut self) -> Option<&'a str> {
        self.rest.next().map(String::as_str)
    }
}

/// A child run's argument that is missing or does not parse. Its `Debug` is its message.
#[derive(Clone, PartialEq, Eq)]
pub struct OneRunError {
    name: String,
    problem: String,
}

impl std::fmt::Display for OneRunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{ONE}: {} {}", self.name, self.problem)
    }
}

impl std::fmt::Debug for OneRunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for OneRunError {}

/// User plus system time from a `/proc/PID/stat` line, in seconds.
fn parse_stat(stat: &str) -> Option<f64> {
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    Some((utime + stime) / USER_HZ)
}

/// `VmHWM` in kB from a `/proc/PID/status` text.
fn parse_peak_kb(status: &str) -> Option<f64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_failed_exits_with_failure() {
        use std::process::ExitCode;
        assert_eq!(exit_code::<String>("bench", Ok(())), ExitCode::SUCCESS);
        assert_eq!(exit_code("bench", Err("no")), ExitCode::FAILURE);
    }

    #[test]
    fn stat_fields_after_a_command_name_with_spaces_and_parentheses() {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
        // utime stime ...
        let line = "42 (a (b) c) R 1 42 42 0 -1 4194304 10 0 0 0 250 75 0 0 20 0 1 0";
        assert_eq!(parse_stat(line), Some(3.25));
        assert_eq!(parse_stat("42 (x) R 1 2"), None);
    }

    #[test]
    fn a_child_runs_arguments_in_order() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(one_run(&args(&["bench", "1000,10000"])).is_none());
        assert!(one_run(&args(&["bench"])).is_none());
        let a = args(&["bench", "--one", "1000", "2.5", "/tmp/x"]);
        let mut one = one_run(&a).expect("a child run");
        assert_eq!(one.next::<usize>("robots"), Ok(1000));
        assert_eq!(one.next::<f64>("duration"), Ok(2.5));
        assert_eq!(one.optional(), Some("/tmp/x"));
        assert_eq!(one.optional(), None);
        let e = one.next::<usize>("threads").unwrap_err();
        assert_eq!(e.to_string(), "--one: threads missing");
        let a = args(&["bench", "--one", "many"]);
        let e = one_run(&a).expect("a child run").next::<usize>("robots");
        assert_eq!(
            e.unwrap_err().to_string(),
            "--one: robots \"many\": invalid digit found in string"
        );
    }

    #[test]
    fn size_lists() {
        assert_eq!(size_list("10,2000"), Ok(vec![10, 2000]));
        assert!(size_list("10,,20").is_err());
        assert!(size_list("1e6").is_err());
        let a: Vec<String> = ["bench", "100", "2.5", "x"].map(String::from).to_vec();
        assert_eq!(arg::<f64>(&a, 2, "DURATION", "seconds"), Ok(Some(2.5)));
        assert_eq!(arg::<f64>(&a, 4, "DURATION", "seconds"), Ok(None));
        let e = arg::<usize>(&a, 3, "THREADS", "a number of threads").unwrap_err();
        assert_eq!(
            format!("{e:?}"),
            "THREADS is a number of threads, not \"x\""
        );
        let e = size_list("100,x").unwrap_err();
        assert_eq!(
            format!("{e:?}"),
            "SIZES is a comma-separated list of whole numbers, such as 10000,100000: \"x\" is not one"
        );
    }

    #[test]
    fn seed_lists() {
        assert_eq!(seed_list("SEEDS", "7"), Ok(vec![7]));
        assert_eq!(
            seed_list("SEEDS", "77,4242,31337"),
            Ok(vec![77, 4242, 31337])
        );
        assert_eq!(seed_list("SEEDS", "3..5"), Ok(vec![3, 4, 5]));
        assert_eq!(seed_list("SEEDS", "5..5"), Ok(vec![5]));
        let e = seed_list("SEEDS", "120..101").unwrap_err().to_string();
        assert!(e.starts_with("SEEDS is a seed"), "{e}");
        assert!(
            e.ends_with("\"120..101\" runs backwards (write 101..120)"),
            "{e}"
        );
        let e = seed_list("SEEDS", "77,x").unwrap_err().to_string();
        assert!(e.ends_with("\"x\" is not a whole number"), "{e}");
        assert!(seed_list("SEEDS", "1..").is_err());
        assert!(seed_list("SEEDS", "").is_err());
        assert!(seed_list("SEEDS", "1,,2").is_err());
        assert!(seed_list("SEEDS", "-1").is_err());
    }

    #[test]
    fn help() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(help_asked(&a(&["bench", "--help"])));
        assert!(help_asked(&a(&["bench", "100", "-h"])));
        assert!(!help_asked(&a(&["bench", "100"])));
        assert!(!help_asked(&a(&["-h"])));
    }

    #[test]
    fn processor_time_below_a_tick_is_not_a_zero() {
        // Measured: printed as before.
        assert_eq!(cpu_per(0.37, 60.0, 4), "0.0062");
        assert_eq!(cpu_per(0.01, 1.0, 4), "0.0100");
        assert_eq!(cpu_per(2.5, 5.0 * 24.0 * 1000.0 / 1e9, 1), "20833.3");
        // No tick: an upper bound, at least the last decimal printed.
        assert_eq!(cpu_per(0.0, 60.0, 4), "< 0.0002");
        assert_eq!(cpu_per(0.0, 300.0, 4), "< 0.0001");
        assert_eq!(cpu_per(0.0, 5.0, 4), "< 0.0020");
        assert_eq!(cpu_per(0.0, 5.0 * 24.0 * 700.0 / 1e9, 1), "< 119.1");
        assert_eq!(cpu_per(f64::NAN, 5.0, 4), "NaN");
    }

    #[test]
    fn peak_memory_line() {
        let status = "Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t    2048 kB\nVmRSS:\t 1000 kB\n";
        assert_eq!(parse_peak_kb(status), Some(2048.0));
        assert_eq!(parse_peak_kb("Name:\tx\n"), None);
    }

    #[test]
    fn this_process_and_thread_have_used_some_time() {
        // Linux only; elsewhere the readers say they cannot tell.
        if std::path::Path::new("/proc/thread-self/schedstat").exists() {
            let mut x = 0u64;
            for i in 0..2_000_000u64 {
                x = x.wrapping_mul(31).wrapping_add(i);
            }
            assert!(x != 1);
            assert!(thread_cpu().is_some_and(|s| s > 0.0));
            assert!(process_cpu().is_some_and(|s| s >= 0.0));
            assert!(peak_memory_mb().is_some_and(|m| m > 0.0));
        }
    }
}
