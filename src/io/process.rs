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
//! * [`Supervised`] (process groups, `prctl(PR_SET_PDEATHSIG)`, `kill(-pgid)`): the
//!   command `leader run` supervises, started in a process group of its own (so
//!   stopping it reaches every process it started), killed by the kernel if
//!   `leader run` itself dies (so a `kill -9` of the leader cannot leave a deposed
//!   command running), stopped with SIGTERM and then SIGKILL after a grace period.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

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

/// A running command.
pub struct Supervised {
    child: std::process::Child,
}

/// 128 + n for death by signal n, else the exit code.
pub fn exit_code(status: ExitStatus) -> i32 {
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

impl Supervised {
    /// Starts `argv` with `env` added to ours.
    pub fn spawn(argv: &[String], env: &[(&str, String)]) -> io::Result<Self> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| io::Error::other("no command given"))?;
        let parent = std::process::id() as libc::pid_t;
        let mut command = Command::new(program);
        command.args(args).process_group(0);
        for (k, v) in env {
            command.env(k, v);
        }
        // SAFETY: only async-signal-safe calls (prctl, getppid, _exit) between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The parent may have died before the prctl took effect.
                if libc::getppid() != parent {
                    libc::_exit(137);
                }
                Ok(())
            });
        }
        let child = command.spawn()?;
        Ok(Supervised { child })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit code once the command has ended.
    pub fn try_exit(&mut self) -> io::Result<Option<i32>> {
        Ok(self.child.try_wait()?.map(exit_code))
    }

    fn signal_group(&self, signal: libc::c_int) {
        // SAFETY: plain syscall; the group id is the child's pid (process_group(0)).
        unsafe {
            libc::kill(-(self.child.id() as libc::pid_t), signal);
        }
    }

    /// SIGTERM to the command's process group, SIGKILL after `grace`; returns
    /// the exit code and whether SIGKILL was needed.
    pub fn stop(&mut self, grace: Duration) -> (i32, bool) {
        if let Ok(Some(code)) = self.try_exit() {
            self.signal_group(libc::SIGTERM); // leftovers of the group, if any
            return (code, false);
        }
        self.signal_group(libc::SIGTERM);
        let until = Instant::now() + grace;
        while Instant::now() < until {
            if let Ok(Some(code)) = self.try_exit() {
                return (code, false);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.signal_group(libc::SIGKILL);
        let code = self.child.wait().map(exit_code).unwrap_or(137);
        (code, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_ignores_sigterm_is_killed_after_the_grace() {
        let argv = [
            "sh".to_string(),
            "-c".into(),
            "trap '' TERM; sleep 30".into(),
        ];
        let mut child = Supervised::spawn(&argv, &[]).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let started = Instant::now();
        let (code, killed) = child.stop(Duration::from_millis(300));
        assert!(killed);
        assert_eq!(code, 128 + libc::SIGKILL);
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn the_exit_code_and_the_environment_pass_through() {
        let argv = ["sh".to_string(), "-c".into(), "exit $X".into()];
        let mut child = Supervised::spawn(&argv, &[("X", "7".into())]).unwrap();
        let code = loop {
            if let Some(code) = child.try_exit().unwrap() {
                break code;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(code, 7);
    }
}
