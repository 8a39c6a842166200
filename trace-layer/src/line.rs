//! One call, one line: `{"thread":..,"command":..,"args":{..},"result":..}`, built in a buffer
//! of the calling thread and written with one `write` to the trace file (the `file` setting,
//! [`crate::config`], opened for appending) or stderr. Only that write holds a lock: lines of different threads
//! never interleave, and no lock is held while the call goes down.

use std::cell::Cell;

use crate::json::Json;
use crate::print::Print;

/// The variable naming the trace file before the layer had settings: an alias of the `file`
/// setting's `VK_RUST_TRACE_FILE`.
pub const TRACE_FILE_VARIABLE: &str = "VK_LAYER_RUST_TRACE_FILE";

thread_local! {
    /// The calling thread's line buffer, reused from call to call.
    static BUFFER: Cell<String> = const { Cell::new(String::new()) };
    /// The kernel's id of the calling thread (what `top -H` and `gdb` show).
    // SAFETY: `gettid` takes nothing and cannot fail.
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
    crate::config::current().write(w.as_str().as_bytes());
    let _ = BUFFER.try_with(|buffer| buffer.set(w.into_string()));
}
