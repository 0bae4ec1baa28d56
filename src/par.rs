//! Work spread over the thread pool only when it is worth it.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

use rayon::prelude::*;
use rayon::ScopeFifo;

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

/// Limits on the items a [`pipeline`] holds at once (taken and not yet
/// consumed): a count and a total cost (say, bytes of input), the cost
/// allowed to be passed by one item alone.
#[derive(Clone, Copy, Debug)]
pub struct InFlight {
    /// Items at most.
    pub items: usize,
    /// Their summed cost at most, unless one item alone costs more.
    pub cost: u64,
}

/// `work` of each item on the thread pool, and `consume` of its answer in
/// the items' order, within the limits of `in_flight`; the first error (of
/// `items` or of `consume`), in the items' order, stops it.
///
/// A window of items mapped in parallel and then consumed on the calling
/// thread leaves the workers idle while it consumes, and the caller idle
/// while they work: each window is two cross-thread wake-ups, and the
/// workers spin before they sleep. Here the answers are consumed on the
/// pool as soon as the next in order is ready, by whichever worker finishes
/// it (or finds it ready), while the other workers go on with the following
/// items; each consumed answer lets the next item in. The calling thread
/// waits once, for the end.
///
/// The consumer is one thread at a time (a lock held with `try_lock`, never
/// waited for: a worker that finds it taken leaves its answer to the thread
/// that holds it, which looks again before letting go), and it is also the
/// only thread that takes items, so `items` and `consume` need not be
/// `Sync`.
pub fn pipeline<T, R, E>(
    items: impl Iterator<Item = Result<T, E>> + Send,
    in_flight: InFlight,
    cost: impl Fn(&T) -> u64 + Sync,
    work: impl Fn(T) -> R + Sync,
    consume: impl FnMut(R) -> Result<(), E> + Send,
) -> Result<(), E>
where
    T: Send,
    R: Send,
    E: Send,
{
    let p = Pipe {
        answers: Mutex::new(Answers {
            first: 0,
            slots: VecDeque::new(),
            cost: 0,
        }),
        consumer: Mutex::new(Consumer {
            items,
            next: None,
            done: false,
            error: None,
            consume,
        }),
        in_flight: InFlight {
            items: in_flight.items.max(1),
            cost: in_flight.cost,
        },
        cost,
        work,
    };
    rayon::scope_fifo(|s| p.drain(s));
    let c = p.consumer.into_inner().unwrap_or_else(|e| e.into_inner());
    match c.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The answers of the items taken and not yet consumed, in order.
struct Answers<R> {
    /// Sequence number of `slots[0]`.
    first: usize,
    /// Per item: its cost and, once done, its answer.
    slots: VecDeque<(u64, Option<R>)>,
    /// The items' summed cost.
    cost: u64,
}

/// What the consuming thread holds.
struct Consumer<I, T, C, E> {
    items: I,
    /// The next item, taken but not yet let in (it did not fit).
    next: Option<T>,
    /// `items` ended (or failed).
    done: bool,
    error: Option<E>,
    consume: C,
}

struct Pipe<I, T, R, E, K, W, C> {
    answers: Mutex<Answers<R>>,
    consumer: Mutex<Consumer<I, T, C, E>>,
    in_flight: InFlight,
    cost: K,
    work: W,
}

impl<I, T, R, E, K, W, C> Pipe<I, T, R, E, K, W, C>
where
    I: Iterator<Item = Result<T, E>> + Send,
    T: Send,
    R: Send,
    E: Send,
    K: Fn(&T) -> u64 + Sync,
    W: Fn(T) -> R + Sync,
    C: FnMut(R) -> Result<(), E> + Send,
{
    fn answers(&self) -> MutexGuard<'_, Answers<R>> {
        self.answers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Item `seq`'s work, then its answer's turn to be consumed.
    fn run<'s>(&'s self, s: &ScopeFifo<'s>, seq: usize, item: T) {
        let answer = (self.work)(item);
        {
            let mut a = self.answers();
            let at = seq - a.first;
            a.slots[at].1 = Some(answer);
        }
        self.drain(s);
    }

    /// As the consumer (unless another thread is): lets items in while
    /// they fit and consumes the answers ready in order; then, having let
    /// go, looks again for an answer that came meanwhile.
    fn drain<'s>(&'s self, s: &ScopeFifo<'s>) {
        loop {
            let Ok(mut c) = self.consumer.try_lock() else {
                return;
            };
            loop {
                self.let_in(s, &mut c);
                let (cost, answer) = {
                    let mut a = self.answers();
                    if !matches!(a.slots.front(), Some((_, Some(_)))) {
                        break;
                    }
                    a.first += 1;
                    match a.slots.pop_front() {
                        Some((cost, Some(answer))) => (cost, answer),
                        _ => unreachable!("the front answer was there"),
                    }
                };
                if c.error.is_none() {
                    if let Err(e) = (c.consume)(answer) {
                        c.error = Some(e);
                        c.done = true;
                    }
                }
                self.answers().cost -= cost;
            }
            drop(c);
            if !matches!(self.answers().slots.front(), Some((_, Some(_)))) {
                return;
            }
        }
    }

    /// Takes items and spawns their work while they fit in the limits.
    fn let_in<'s>(&'s self, s: &ScopeFifo<'s>, c: &mut Consumer<I, T, C, E>) {
        while !c.done {
            let item = match c.next.take() {
                Some(item) => item,
                None => match c.items.next() {
                    Some(Ok(item)) => item,
                    Some(Err(e)) => {
                        c.error = Some(e);
                        c.done = true;
                        return;
                    }
                    None => {
                        c.done = true;
                        return;
                    }
                },
            };
            let cost = (self.cost)(&item);
            let seq = {
                let mut a = self.answers();
                let fits = a.slots.is_empty()
                    || (a.slots.len() < self.in_flight.items
                        && a.cost + cost <= self.in_flight.cost);
                if !fits {
                    c.next = Some(item);
                    return;
                }
                a.slots.push_back((cost, None));
                a.cost += cost;
                a.first + a.slots.len() - 1
            };
            s.spawn_fifo(move |s| self.run(s, seq, item));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// Work of uneven length, so that answers are ready out of order.
    fn work(i: u64) -> u64 {
        let mut x = i;
        for _ in 0..(i * 7919 % 13) * 1000 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        std::hint::black_box(x);
        i * i
    }

    #[test]
    fn pipeline_consumes_every_answer_in_order_within_its_limits() {
        for threads in [1, 2, 4] {
            for limit in [1, 3, 8] {
                // Items started and their cost; items consumed and theirs.
                let started = AtomicUsize::new(0);
                let started_cost = AtomicUsize::new(0);
                let (mut consumed, mut consumed_cost) = (0, 0);
                let cost = |i: u64| i % 4 * 3;
                let mut got = Vec::new();
                let r: Result<(), ()> = pool(threads).install(|| {
                    pipeline(
                        (0..500u64).map(Ok),
                        InFlight {
                            items: limit,
                            cost: 10,
                        },
                        |&i| cost(i),
                        |i| {
                            started.fetch_add(1, Ordering::SeqCst);
                            started_cost.fetch_add(cost(i) as usize, Ordering::SeqCst);
                            (i, work(i))
                        },
                        |(i, a)| {
                            // This item and the others started, not consumed.
                            let held = started.load(Ordering::SeqCst) - consumed;
                            let held_cost = started_cost.load(Ordering::SeqCst) - consumed_cost;
                            assert!(held <= limit, "{held} items in flight");
                            assert!(held == 1 || held_cost <= 10, "{held_cost} in flight");
                            consumed += 1;
                            consumed_cost += cost(i) as usize;
                            got.push(a);
                            Ok(())
                        },
                    )
                });
                r.unwrap();
                assert_eq!(got, (0..500u64).map(|i| i * i).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn pipeline_stops_at_the_first_error_in_order() {
        for threads in [1, 2] {
            // Item 150 fails; `consume` may fail first.
            let run = |consume: &mut (dyn FnMut(u64) -> Result<(), u64> + Send)| {
                pool(threads).install(|| {
                    pipeline(
                        (0..200u64).map(|i| if i == 150 { Err(i) } else { Ok(i) }),
                        InFlight {
                            items: 4,
                            cost: u64::MAX,
                        },
                        |_| 0,
                        work,
                        consume,
                    )
                })
            };
            let mut got = Vec::new();
            let r = run(&mut |a| {
                if a == 90 * 90 {
                    return Err(90);
                }
                got.push(a);
                Ok(())
            });
            assert_eq!(r, Err(90));
            assert_eq!(got, (0..90u64).map(|i| i * i).collect::<Vec<_>>());
            assert_eq!(run(&mut |_| Ok(())), Err(150));
        }
    }
}
