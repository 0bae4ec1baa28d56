//! The sort's two requests to the operating system about memory: large
//! buffers backed by huge pages, and freed heap memory handed back.
//!
//! Both go through the C library (glibc on Linux) because the standard
//! library has no way to ask; elsewhere they do nothing.

/// Transparent huge pages are this large on x86-64 and aarch64 Linux.
const HUGE_PAGE: usize = 2 << 20;

/// An empty vector with room for `capacity` elements, whose memory the kernel
/// is asked to back with transparent huge pages.
///
/// The sort's buffers are read and written at random: the radix sort's
/// distribution, the gather of wide records in key order. With 4 KiB pages
/// nearly every such access also misses the TLB; with 2 MiB pages a 100 MB
/// buffer needs 50 entries instead of 25,000, and the kernel faults it in
/// 512 times less often. Measured on the sort bench (256 MiB budget,
/// 2-core VM, medians of 4 alternating runs): 10M 100-byte records 0.74× the
/// wall and CPU time; 50M `(u64, u32)` pairs 0.90×. Many kernels (this VM's
/// among them) give huge pages only to memory that asks (`madvise` mode).
pub(super) fn large_vec<T>(capacity: usize) -> Vec<T> {
    let v = Vec::with_capacity(capacity);
    let bytes = capacity.saturating_mul(std::mem::size_of::<T>());
    if bytes >= 2 * HUGE_PAGE {
        advise_huge_pages(v.as_ptr() as usize, bytes);
    }
    v
}

/// Asks for huge pages on the whole 2 MiB pages within `[addr, addr + len)`.
fn advise_huge_pages(addr: usize, len: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn madvise(
                addr: *mut std::ffi::c_void,
                len: usize,
                advice: std::ffi::c_int,
            ) -> std::ffi::c_int;
        }
        const MADV_HUGEPAGE: std::ffi::c_int = 14;
        let start = addr.next_multiple_of(HUGE_PAGE);
        let end = addr.saturating_add(len) / HUGE_PAGE * HUGE_PAGE;
        if end > start {
            // SAFETY: the range lies inside one live allocation of ours
            // (rounded inwards to whole huge pages, so it is page-aligned as
            // madvise requires), and MADV_HUGEPAGE changes only how the
            // kernel backs those pages, never their contents or validity. A
            // kernel without huge pages returns an error, which is ignored:
            // the advice is an optimisation.
            unsafe {
                madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = (addr, len);
}

/// Hands memory freed by a spill of heap records back to the operating system.
///
/// Heap records (names) are small allocations, freed by the million when a
/// run is written. glibc's allocator keeps such freed memory resident in its
/// heaps, where the large buffers allocated next (which it maps afresh) cannot
/// use it, so without this the resident memory of a pipeline of sorts grows
/// from step to step well past its budget (measured: cnr-2000 as named arcs
/// imported at `--mem 64M` peaked at 115 MB resident without it). The sort is
/// where those records die, so this is called after each spill of a
/// [`Record::HAS_HEAP`] buffer. Does nothing on other platforms.
pub(crate) fn release_freed_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: malloc_trim takes no pointer, is thread-safe (it locks each
        // arena), and only returns wholly free pages to the kernel; live
        // allocations are untouched.
        unsafe {
            malloc_trim(0);
        }
    }
}
