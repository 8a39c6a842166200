//! One call, one line: `{"thread":..,"command":..,"args":{..},"result":..}`, built in a buffer
//! of the calling thread and written with one `write` to the trace file (`VK_LAYER_RUST_TRACE_FILE`,
//! opened for appending) or stderr. Only that write holds a lock: lines of different threads
//! never interleave, and no lock is held while the call goes down.

use std::cell::Cell;
use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

use crate::json::Json;
use crate::print::Print;

/// The variable naming the trace file.
pub const TRACE_FILE_VARIABLE: &str = "VK_LAYER_RUST_TRACE_FILE";

thread_local! {
    /// The calling thread's line buffer, reused from call to call.
    static BUFFER: Cell<String> = const { Cell::new(String::new()) };
    /// The kernel's id of the calling thread (what `top -H` and `gdb` show).
    static THREAD_ID: i32 = unsafe { libc::gettid() };
}

/// Starts the line of `command`; the arguments follow as members of `"args"`.
pub fn begin(command: &str) -> Json {
    // A thread being torn down has no buffer left: a fresh one does.
    let buffer = BUFFER.try_with(Cell::take).unwrap_or_default();
    let mut w = Json::new(buffer);
    w.open_object();
    w.key("thread");
    w.signed(THREAD_ID.try_with(|id| i64::from(*id)).unwrap_or(0));
    w.key("command");
    w.string(command.as_bytes());
    w.key("args");
    w.open_object();
    w
}

/// Ends the line of a command without a result and writes it.
pub fn end(mut w: Json) {
    w.close_object();
    w.close_object();
    write_line(w);
}

/// Ends the line with the command's `result` and writes it.
pub fn end_with<R: Print>(mut w: Json, result: &R) {
    w.close_object();
    w.key("result");
    // SAFETY: results are scalars, enums or handles: nothing to follow.
    unsafe { result.print(&mut w) };
    w.close_object();
    write_line(w);
}

fn write_line(mut w: Json) {
    w.raw("\n");
    sink().write(w.as_str().as_bytes());
    let _ = BUFFER.try_with(|buffer| buffer.set(w.into_string()));
}

/// Where the lines go.
enum Sink {
    File(Mutex<File>),
    Stderr,
}

impl Sink {
    /// The file `VK_LAYER_RUST_TRACE_FILE` names (appended to), stderr when it is unset or
    /// cannot be opened.
    fn open() -> Sink {
        let Some(path) = std::env::var_os(TRACE_FILE_VARIABLE).filter(|p| !p.is_empty()) else {
            return Sink::Stderr;
        };
        match File::options().create(true).append(true).open(&path) {
            Ok(file) => Sink::File(Mutex::new(file)),
            Err(e) => {
                eprintln!("VK_LAYER_RUST_trace: cannot open {}: {e}; tracing to stderr", path.to_string_lossy());
                Sink::Stderr
            }
        }
    }

    /// Writes one whole line; errors are dropped (the application goes on).
    fn write(&self, line: &[u8]) {
        let _ = match self {
            Sink::File(file) => file.lock().unwrap_or_else(|e| e.into_inner()).write_all(line),
            Sink::Stderr => std::io::stderr().lock().write_all(line),
        };
    }
}

fn sink() -> &'static Sink {
    static SINK: OnceLock<Sink> = OnceLock::new();
    SINK.get_or_init(Sink::open)
}
