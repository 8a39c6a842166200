//! `cargo xtask run`: builds the loader.

use std::process::Command;

pub fn main(args: &[String]) -> Result<(), String> {
    if let Some(arg) = args.first() {
        return Err(format!("`run` takes no arguments, got `{arg}`"));
    }
    // Under `cargo xtask`, CARGO names the cargo that is running us; use the same one.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--package", "loader"])
        .current_dir(crate::repo_root())
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo build --package loader` failed ({status})"))
    }
}
