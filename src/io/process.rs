//! The process's own OS settings, kept out of `cmd` and `ops` because each is a
//! raw libc call with a platform condition and a safety argument:
//!
//! * [`keep_freed_batch_memory`] (glibc `mallopt`): allocator tuning for offline
//!   runs. Every input batch arrives in buffers of a few megabytes, allocated on
//!   the reader thread and freed on the runner's. With glibc's defaults such a
//!   buffer is its own mapping (or trimmed off the arena when freed), so the next
//!   batch faults its pages in again and the kernel zeroes them: 13 % of the CPU
//!   time of a 10 M-row run in the profile. Raising the mapping and trim
//!   thresholds makes freed batch memory serve the next batch; peak RSS stays
//!   about what the batches in flight need.

/// Keeps freed batch-sized blocks in the process for reuse (glibc only; elsewhere nothing).
pub fn keep_freed_batch_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; glibc applies them under its own lock.
    unsafe {
        // 32 MiB is the largest threshold glibc accepts; trimming keeps up to 256 MiB free.
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}
