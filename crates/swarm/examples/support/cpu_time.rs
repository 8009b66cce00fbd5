//! Processor time for the examples that report speed (Linux `/proc/self/stat`).

/// Processor time of this process so far (user + system, all threads), in seconds; `None`
/// where `/proc/self/stat` cannot be read.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}
