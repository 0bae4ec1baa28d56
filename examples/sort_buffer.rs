//! Micro-benchmark of run formation's in-memory sort: one buffer of random
//! `(u64, u32)` records (key = splitmix64(i), value = i, as in the sort
//! bench), sorted by the median-split sort the sort used before
//! ([`webmill::sort::median_split_sort`]) and by
//! [`webmill::sort::block_radix`]. Prints CPU and wall seconds per round and
//! their medians.
//!
//! `cargo run --release --example sort_buffer -- [RECORDS] [ROUNDS]`
//! `[old|new]` (defaults: 6.7M records, the buffer of a 256 MiB budget; 5
//! rounds; both sorts).

use std::time::Instant;

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The process's CPU time (all threads), in seconds.
fn cpu_secs() -> f64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write.
    unsafe { clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.sec as f64 + ts.nsec as f64 * 1e-9
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(6_700_000);
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    // "old" or "new" times one sort only (for profiling).
    let only = args.get(3).map(String::as_str);
    let input: Vec<(u64, u32)> = (0..n).map(|i| (splitmix64(i as u64), i as u32)).collect();
    let mut want = input.clone();
    want.sort_unstable();
    let mut buf = input.clone();
    let mut figures: Vec<(&str, Vec<f64>, Vec<f64>)> = vec![
        ("par_sort", vec![], vec![]),
        ("block_radix", vec![], vec![]),
    ];
    for round in 0..rounds {
        for (which, (name, cpus, walls)) in figures.iter_mut().enumerate() {
            if only == Some(["new", "old"][which]) {
                continue;
            }
            buf.copy_from_slice(&input);
            let (c0, t0) = (cpu_secs(), Instant::now());
            if which == 0 {
                webmill::sort::median_split_sort(&mut buf);
            } else {
                webmill::sort::block_radix::sort_by_key_prefix(
                    &mut buf,
                    &|e: &(u64, u32)| e.0,
                    &|a, b| a.cmp(b),
                );
            }
            let (cpu, wall) = (cpu_secs() - c0, t0.elapsed().as_secs_f64());
            assert!(buf == want, "{name}: wrong order");
            println!("round {round} {name:12} cpu {cpu:.3} s wall {wall:.3} s");
            cpus.push(cpu);
            walls.push(wall);
        }
    }
    for (name, cpus, walls) in figures {
        if cpus.is_empty() {
            continue;
        }
        println!(
            "median {name:12} cpu {:.3} s wall {:.3} s",
            median(cpus),
            median(walls)
        );
    }
}
