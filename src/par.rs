//! Work spread over the thread pool only when it is worth it.

use rayon::prelude::*;

/// `f` of each item, in the items' order: on the thread pool when
/// `parallel`, else on the calling thread.
///
/// For work that is worth spreading only when each item is heavy. The
/// caller of a pool is not a pool thread: it waits for a worker to wake
/// and for the answers, two cross-thread wake-ups that cost ~0.1 ms when
/// the other cores are idle, more than a few light items take to do
/// here. Callers say which side of that line they are on.
pub fn map_in_order<T: Send, R: Send>(
    items: impl Iterator<Item = T>,
    parallel: bool,
    f: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    if parallel {
        items.collect::<Vec<_>>().into_par_iter().map(f).collect()
    } else {
        items.map(f).collect()
    }
}
