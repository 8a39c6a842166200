//! A private X server for the tests that open windows (vkcube), and the programs they need.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The screen's size.
pub const WIDTH: u32 = 640;
pub const HEIGHT: u32 = 480;

/// `program` on `PATH`, if it is there.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| p.is_file())
}

/// A private X server; killed when dropped.
pub struct Xvfb {
    child: Child,
    pub display: String,
}

impl Xvfb {
    /// Starts Xvfb on a display it picks itself (`-displayfd`: no race with other tests or
    /// processes for a number); returns once it accepts connections.
    pub fn start() -> Xvfb {
        use std::io::BufRead;
        use std::os::fd::FromRawFd;
        use std::os::unix::process::CommandExt;
        // Both ends close-on-exec, so processes other tests start meanwhile do not inherit the
        // write end (a reader would then wait forever if this Xvfb died); only this Xvfb gets it.
        let mut fds = [0; 2];
        // SAFETY: `fds` is a local array of the two ints pipe2 writes.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0, "pipe2");
        let write_end = fds[1];
        let mut command = Command::new("Xvfb");
        // -noreset: by default the server resets when its last client leaves, and a client
        // connecting during the reset fails ("XCB failed to connect ... error:1").
        command
            .args(["-displayfd", &write_end.to_string(), "-screen", "0", &format!("{WIDTH}x{HEIGHT}x24"), "-br", "-nolisten", "tcp", "-noreset"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: fcntl is async-signal-safe; it only clears close-on-exec on our pipe's write end.
        unsafe {
            command.pre_exec(move || {
                libc::fcntl(write_end, libc::F_SETFD, 0);
                Ok(())
            })
        };
        let child = command.spawn().expect("start Xvfb");
        // SAFETY: our copy of the write end, which nothing here uses again (the child has its own).
        unsafe { libc::close(fds[1]) };
        // SAFETY: the read end of the pipe made above, owned here from now on.
        let mut reader = std::io::BufReader::new(unsafe { std::fs::File::from_raw_fd(fds[0]) });
        let mut number = String::new();
        reader.read_line(&mut number).expect("Xvfb's display number");
        let number = number.trim();
        assert!(!number.is_empty() && number.chars().all(|c| c.is_ascii_digit()), "Xvfb did not start: {number:?}");
        Xvfb { child, display: format!(":{number}") }
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
