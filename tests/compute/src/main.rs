//! `vk-compute [COUNT [ITERATIONS]]`: runs `out[i] = in[i] * in[i] + 1` over COUNT 32-bit values
//! (default 65536), ITERATIONS times (default 1), on the first physical device with a compute
//! queue, through the `libvulkan.so.1` the dynamic linker finds (as ash loads it: set
//! `LD_LIBRARY_PATH` to choose the loader), and checks every value. Prints the loader library, the
//! device and driver it ran on, then `PASS`; on failure prints `FAIL` and the step that failed and
//! exits non-zero.

use std::process::ExitCode;

fn parse(args: &[String]) -> Result<vk_compute::Options, String> {
    let number = |text: &String, what: &str| text.parse::<u32>().ok().filter(|&n| n > 0).ok_or(format!("{what} must be a positive integer, got {text:?}"));
    let mut options = vk_compute::Options::default();
    match args {
        [] => {}
        [count] => options.count = number(count, "COUNT")?,
        [count, iterations] => {
            options.count = number(count, "COUNT")?;
            options.iterations = number(iterations, "ITERATIONS")?;
        }
        _ => return Err("usage: vk-compute [COUNT [ITERATIONS]]".into()),
    }
    Ok(options)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse(&args) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("vk-compute: {e}");
            return ExitCode::from(2);
        }
    };
    match vk_compute::run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            println!("FAIL: {e}");
            ExitCode::FAILURE
        }
    }
}
