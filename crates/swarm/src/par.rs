//! Passes over the robots on several threads, on pools of threads kept for the process.
//!
//! A pass splits its work by index into parts (as many as it has threads) and runs each part
//! on a thread of a pool of that many threads (rayon's), so a frame's passes cost no thread
//! start: starting a thread for each part of each pass cost more than the work of a pass at
//! tens of thousands of robots. What a part computes depends on its indexes alone, and the
//! results come back in the parts' order, so a run is the same whatever the threads do when.

use std::sync::{Arc, Mutex, PoisonError};

use rayon::iter::{IntoParallelIterator, ParallelIterator};
use rayon::{ThreadPool, ThreadPoolBuilder};

/// The process that built the pools, and the pools by their number of threads.
type Pools = (u32, Vec<(usize, Arc<ThreadPool>)>);

/// The pools built so far (a forked child has none of its parent's threads, so it builds its
/// own).
static POOLS: Mutex<Pools> = Mutex::new((0, Vec::new()));

/// The pool of `threads` threads, built the first time it is asked for; `None` if the
/// threads cannot be started (the parts then run one after the other on the caller's).
fn pool(threads: usize) -> Option<Arc<ThreadPool>> {
    let mut pools = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
    let pid = std::process::id();
    if pools.0 != pid {
        // Built in the parent of this process: its threads are not here. Dropping the pools
        // would only signal threads that no longer exist; they are left alone.
        for (_, p) in pools.1.drain(..) {
            std::mem::forget(p);
        }
        pools.0 = pid;
    }
    if let Some((_, p)) = pools.1.iter().find(|(n, _)| *n == threads) {
        return Some(Arc::clone(p));
    }
    let p = ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("simrob-swarm-{i}"))
        .build()
        .ok()?;
    let p = Arc::new(p);
    pools.1.push((threads, Arc::clone(&p)));
    Some(p)
}

/// Runs `task` on each of `parts` on a pool of `threads` threads (on the caller's thread
/// alone for `threads` ≤ 1), and returns what each part gave, in the parts' order.
pub fn each<I, T, F>(threads: usize, parts: Vec<I>, task: F) -> Vec<T>
where
    I: Send,
    T: Send,
    F: Fn(I) -> T + Send + Sync,
{
    let pool = if threads > 1 && parts.len() > 1 {
        pool(threads)
    } else {
        None
    };
    match pool {
        Some(pool) => pool.install(|| parts.into_par_iter().map(&task).collect()),
        None => parts.into_iter().map(task).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_come_back_in_order_on_any_number_of_threads() {
        let want: Vec<usize> = (0..37).map(|k| k * k).collect();
        for threads in [1, 2, 3, 8] {
            let got = each(threads, (0..37).collect(), |k: usize| k * k);
            assert_eq!(got, want, "{threads} threads");
        }
        // Parts that write their own slices.
        let mut data = vec![0u32; 1000];
        let parts: Vec<_> = data.chunks_mut(300).enumerate().collect();
        let sums = each(2, parts, |(c, part): (usize, &mut [u32])| {
            for (k, x) in part.iter_mut().enumerate() {
                *x = (c * 300 + k) as u32;
            }
            part.len()
        });
        assert_eq!(sums, vec![300, 300, 300, 100]);
        assert!(data.iter().enumerate().all(|(k, &x)| x == k as u32));
    }

    #[test]
    fn a_pool_is_built_once_for_each_number_of_threads() {
        let (a, b) = (pool(3), pool(3));
        let (a, b) = (a.expect("threads start"), b.expect("threads start"));
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.current_num_threads(), 3);
    }
}
