// Ways people launch a program, shared by the driver cache's tests
// (loader/tests/startup_cache.rs) and `cargo xtask bench startup`'s launches probe
// (tests/bench/src/startup.rs), which include this file. Which variables identify a launch, and
// where each comes from: loader/src/cache/launch.rs.

/// Ways people launch a program, each with the variables it sets, fresh per launch (`{n}`: the
/// launch's number): a desktop launcher (startup notification, xdg-activation, GIO), a program
/// Plasma or GNOME starts as a systemd unit, new tabs and windows of terminals, multiplexers' panes,
/// an editor's terminal, an ssh session, a new login.
const LAUNCHES: &[(&str, &[(&str, &str)])] = &[
    ("GNOME's launcher", &[("DESKTOP_STARTUP_ID", "gnome-shell/app/{n}-0-host_TIME{n}"), ("GIO_LAUNCHED_DESKTOP_FILE_PID", "{n}")]),
    ("a Wayland launcher", &[("XDG_ACTIVATION_TOKEN", "token-{n}")]),
    ("a systemd unit", &[("INVOCATION_ID", "{n}a3f0"), ("JOURNAL_STREAM", "8:{n}"), ("SYSTEMD_EXEC_PID", "{n}"), ("MEMORY_PRESSURE_WATCH", "/sys/fs/cgroup/app-{n}.scope/memory.pressure"), ("MANAGERPID", "{n}")]),
    ("gnome-terminal's tab", &[("GNOME_TERMINAL_SCREEN", "/org/gnome/Terminal/screen/{n}"), ("WINDOWID", "{n}"), ("SHLVL", "{n}")]),
    ("konsole's window", &[("KONSOLE_DBUS_SESSION", "/Sessions/{n}"), ("KONSOLE_DBUS_WINDOW", "/Windows/{n}"), ("SHELL_SESSION_ID", "{n}")]),
    ("kitty's window", &[("KITTY_WINDOW_ID", "{n}"), ("KITTY_PID", "{n}")]),
    ("a tmux pane", &[("TMUX", "/tmp/tmux-0/default,{n},0"), ("TMUX_PANE", "%{n}")]),
    ("a screen window", &[("STY", "{n}.pts-0.host"), ("WINDOW", "{n}")]),
    ("VS Code's terminal", &[("VSCODE_GIT_IPC_HANDLE", "/run/user/0/vscode-git-{n}.sock"), ("VSCODE_IPC_HOOK_CLI", "/run/user/0/vscode-ipc-{n}.sock")]),
    ("an ssh session", &[("SSH_CLIENT", "10.0.0.{n} 5{n} 22"), ("SSH_CONNECTION", "10.0.0.{n} 5{n} 10.0.0.1 22"), ("SSH_TTY", "/dev/pts/{n}")]),
    ("a new login", &[("XDG_SESSION_ID", "{n}"), ("SESSION_MANAGER", "local/host:@/tmp/.ICE-unix/{n},unix/host:/tmp/.ICE-unix/{n}"), ("XDG_VTNR", "{n}")]),
    ("a new terminal's shell", &[("PWD", "/home/{n}"), ("OLDPWD", "/tmp/{n}"), ("_", "/usr/bin/app{n}")]),
];
