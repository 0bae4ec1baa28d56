//! Machine resources: memory budgets in bytes, the machine's RAM, peak RSS.

use crate::error::{Error, Result};

/// Parses a byte size such as `512M`, `2G`, `1.5GiB`, `64k` or `1000000`.
/// Suffixes K, M, G, T are binary (powers of 1024), with or without `B`/`iB`.
pub fn parse_bytes(text: &str) -> Result<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim().to_ascii_uppercase();
    let mult: u64 = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => {
            return Err(Error::usage(format!(
                "cannot read {text:?} as a size in bytes: unknown unit {unit:?} (use K, M, G or T)"
            )))
        }
    };
    let value: f64 = num
        .parse()
        .map_err(|_| Error::usage(format!("cannot read {text:?} as a size in bytes")))?;
    if !(value.is_finite() && value >= 0.0) {
        return Err(Error::usage(format!("{text:?} is not a size in bytes")));
    }
    Ok((value * mult as f64) as u64)
}

pub use crate::units::format_bytes;

fn proc_status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        rest.trim().trim_end_matches("kB").trim().parse().ok()
    })
}

/// The process's peak resident set size in bytes (VmHWM), if the OS tells.
pub fn peak_rss() -> Option<u64> {
    proc_status_kib("VmHWM").map(|k| k * 1024)
}

/// The process's current resident set size in bytes (VmRSS).
pub fn current_rss() -> Option<u64> {
    proc_status_kib("VmRSS").map(|k| k * 1024)
}

/// Resets the peak RSS mark to the current RSS (Linux ≥ 4.0), so each stage can
/// report its own peak. Silently does nothing where unsupported.
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Hands memory the process freed back to the operating system (glibc keeps
/// freed small allocations resident), so that a peak measured next is the
/// next step's own. Does nothing on other platforms.
pub fn release_freed_memory() {
    crate::sort::memory::release_freed_heap();
}

/// Largest allocation glibc's malloc serves from its arenas; bigger ones are
/// mapped on their own and unmapped when freed (see
/// [`bound_allocator_retention`]).
pub const MMAP_THRESHOLD: usize = 128 << 10;

/// Keeps the allocator from holding memory the budget no longer counts.
///
/// glibc's malloc raises its mmap threshold each time a mapped block is
/// freed (up to 32 MiB), so after the first large buffers die, later ones —
/// sort buffers, block buffers of a few hundred KiB — come from the per-thread
/// arenas, where a live small allocation pins the pages around it and
/// `malloc_trim` cannot give them back. Resident memory then grows from one
/// phase to the next although the live heap stays within the budget:
/// measured on `index` at `--mem 64M` over 10⁶ generated pages, 202 MiB peak
/// RSS (over the allowance of 170 MiB) with the default, 96 MiB with a single
/// arena. Fixing the threshold at [`MMAP_THRESHOLD`] keeps every large
/// buffer out of the arenas without serializing threads on one arena. Call it
/// first thing in `main`, before any thread starts. Does nothing on other
/// platforms.
pub fn bound_allocator_retention() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
        }
        /// `M_MMAP_THRESHOLD` of glibc's `malloc.h`.
        const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
        // SAFETY: mallopt takes no pointer and only sets a malloc parameter;
        // called before other threads exist, it races with no allocation.
        unsafe {
            mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD as std::ffi::c_int);
        }
    }
}

/// Physical memory of the machine in bytes, if known.
pub fn total_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    info.lines().find_map(|l| {
        let rest = l.strip_prefix("MemTotal:")?;
        rest.trim()
            .trim_end_matches("kB")
            .trim()
            .parse::<u64>()
            .ok()
            .map(|k| k * 1024)
    })
}

/// The default memory budget: a quarter of physical RAM, at least 256 MiB
/// (1 GiB when RAM is unknown).
pub fn default_budget() -> u64 {
    match total_memory() {
        Some(total) => (total / 4).max(256 << 20),
        None => 1 << 30,
    }
}

/// Gives memory the allocator holds freed back to the operating system
/// (glibc's `malloc_trim`; nothing elsewhere). For a long-running process
/// after a burst of work, so that its resident set returns to its level.
pub fn release_freed_heap() {
    crate::sort::memory::release_freed_heap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("1000").unwrap(), 1000);
        assert_eq!(parse_bytes("64k").unwrap(), 65536);
        assert_eq!(parse_bytes("512M").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("2G").unwrap(), 2 << 30);
        assert_eq!(parse_bytes("2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_bytes("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_bytes(" 3 MB ").unwrap(), 3 << 20);
        assert!(parse_bytes("12X").is_err());
        assert!(parse_bytes("").is_err());
        assert!(parse_bytes("G").is_err());
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(3 << 29), "1.5 GiB");
    }

    #[test]
    fn rss_is_readable_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(peak_rss().unwrap() >= current_rss().unwrap() / 2);
            assert!(total_memory().unwrap() > 0);
        }
    }
}
