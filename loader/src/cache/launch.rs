//! Environment variables that identify a launch, a login session, a terminal, a tab, a window or a
//! pane: a new tab, login, unit invocation or launcher click gives them new values, so they are
//! left out of the driver cache's key.
//!
//! This is a denylist of launch identities, never an allowlist of what drivers read. A driver may
//! read any variable (Mesa's driconf lets a variable of an option's own lower-case name, such as
//! `vk_require_etc2`, override the option). So a name is listed only where a spec, man page or
//! program's source gives it as a launch's identity (or it is one of the loader's own logging and
//! cache switches). Nothing a driver could plausibly read is listed: `MESA_*`, `RADV_*`, `__NV_*`,
//! `__GL*`, `DRI_*`, `LD_*`, `VK_*` (other than the loader's own switches), `HOME`, `XDG_*_HOME`,
//! `XDG_RUNTIME_DIR`...
//!
//! `DISPLAY` and `WAYLAND_DISPLAY` stay in the key even though a session can change them
//! (`ssh -X` gives `localhost:10.0`). They name the display server that window-system code connects
//! to and that Mesa's device selection asks for its GPU, and within one desktop session they are the
//! same at every launch.

/// Names left out whole. They are grouped by the spec, man page or source file that sets them.
pub const EXACT: &[&str] = &[
    // The shell's bookkeeping (bash(1), "Shell Variables"): the last command, the working
    // directories, the nesting level and the window size.
    "_",
    "OLDPWD",
    "PWD",
    "SHLVL",
    "COLUMNS",
    "LINES",
    // freedesktop.org startup-notification spec, and the Wayland xdg-activation-v1 protocol: a
    // token per launch, which the launched program is meant to unset.
    "DESKTOP_STARTUP_ID",
    "XDG_ACTIVATION_TOKEN",
    // GLib, gio/gdesktopappinfo.c: the desktop file an application was launched from, and its PID.
    "GIO_LAUNCHED_DESKTOP_FILE",
    "GIO_LAUNCHED_DESKTOP_FILE_PID",
    // systemd.exec(5), "Environment Variables Set or Propagated by the Service Manager" (with
    // LISTEN_PIDFDID from sd_listen_fds(3)): the unit's invocation, its PIDs and sockets, what
    // triggered it, how its last run ended, and its per-unit directories. Each one describes one
    // unit or one run of it. PATH, LANG, USER, LOGNAME, HOME, SHELL, TERM and XDG_RUNTIME_DIR from
    // the same list describe the user and stay in the key.
    "INVOCATION_ID",
    "JOURNAL_STREAM",
    "SYSTEMD_EXEC_PID",
    "MAINPID",
    "MANAGERPID",
    "LISTEN_FDS",
    "LISTEN_PID",
    "LISTEN_PIDFDID",
    "LISTEN_FDNAMES",
    "NOTIFY_SOCKET",
    "WATCHDOG_PID",
    "WATCHDOG_USEC",
    "FDSTORE",
    "MEMORY_PRESSURE_WATCH",
    "MEMORY_PRESSURE_WRITE",
    "SERVICE_RESULT",
    "EXIT_CODE",
    "EXIT_STATUS",
    "MONITOR_SERVICE_RESULT",
    "MONITOR_EXIT_CODE",
    "MONITOR_EXIT_STATUS",
    "MONITOR_INVOCATION_ID",
    "MONITOR_UNIT",
    "TRIGGER_UNIT",
    "TRIGGER_PATH",
    "TRIGGER_TIMER_REALTIME_USEC",
    "TRIGGER_TIMER_MONOTONIC_USEC",
    "REMOTE_ADDR",
    "REMOTE_PORT",
    "PIDFILE",
    "LOG_NAMESPACE",
    // Per-unit paths (/run/<unit>, /var/cache/<unit>...). They stay the same for one unit, but they
    // name the unit, and no driver reads these names.
    "RUNTIME_DIRECTORY",
    "STATE_DIRECTORY",
    "CACHE_DIRECTORY",
    "LOGS_DIRECTORY",
    "CONFIGURATION_DIRECTORY",
    "CREDENTIALS_DIRECTORY",
    // Login sessions: pam_systemd(8) (XDG_SESSION_ID, a counter; XDG_VTNR, which is the same at
    // each graphical login on one seat but names the tty of a console login), LightDM's and SDDM's
    // per-login D-Bus path, ConsoleKit's cookie, and the Kerberos ticket cache that pam_krb5 names
    // per login. tmux(1) refreshes KRB5CCNAME at each attach, in its update-environment default.
    // XDG_SEAT, XDG_SEAT_PATH, XDG_SESSION_TYPE, XDG_SESSION_CLASS and XDG_SESSION_DESKTOP stay
    // in the key: they are the same at each login, and on a multi-seat machine the seat decides
    // which GPUs the session has.
    "XDG_SESSION_ID",
    "XDG_VTNR",
    "XDG_SESSION_PATH",
    "XDG_SESSION_COOKIE",
    "KRB5CCNAME",
    // X session management (XSMP, libSM): the session manager's address, which holds its PID.
    // gnome-session gives each autostarted client an ID (gnome-session/gsm-autostart-app.c).
    "SESSION_MANAGER",
    "DESKTOP_AUTOSTART_ID",
    // D-Bus specification, "Message Bus Starting Services": the bus that started an activated
    // service. Judgement: DBUS_SESSION_BUS_ADDRESS is the stable `unix:path=$XDG_RUNTIME_DIR/bus`
    // with a systemd user bus, but dbus-launch and dbus-run-session make a new abstract socket and
    // GUID at each login. It is left out because which bus instance a session has decides nothing
    // a driver reports about its extensions or devices.
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_STARTER_ADDRESS",
    "DBUS_STARTER_BUS_TYPE",
    // The X authority file: a per-session (with xvfb-run, per-launch) path that X clients read
    // when they connect, which for a driver is at surface creation, where it is loaded anyway.
    "XAUTHORITY",
    // Agents: ssh-agent(1) and gpg-agent(1) sockets and PIDs, the tty that gpg-agent(1) asks users
    // to export as GPG_TTY, and gnome-keyring-daemon's control directory and PID (a random
    // /tmp/keyring-* directory without systemd). byobu refreshes the sockets and PIDs at each
    // attach (BYOBU_UPDATE_ENVVARS).
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "GPG_TTY",
    "GNOME_KEYRING_CONTROL",
    "GNOME_KEYRING_PID",
    // Remote shells: sshd sets these for each session (OpenSSH session.c, do_setup_env; ssh(1),
    // "ENVIRONMENT"). The DISPLAY that X11 forwarding sets stays in the key, as said above.
    "SSH_CLIENT",
    "SSH_CONNECTION",
    "SSH_TTY",
    "SSH_ORIGINAL_COMMAND",
    "SSH_USER_AUTH",
    "SSH_TUNNEL",
    // Terminals. gnome-terminal unsets its own entries and the other terminals' entries before it
    // starts a shell (src/terminal-client-utils.cc, terminal_client_get_environment_filters;
    // VTE's app.cc copies the list). From that list only the identities are taken: COLORTERM,
    // TERM, VTE_VERSION, COLORFGBG, TERM_PROGRAM(_VERSION), WT_PROFILE_ID and the proxies are the
    // same at every launch and stay in the key.
    // gnome-terminal (src/terminal-defines.hh): its D-Bus service name and the tab's object path.
    "GNOME_TERMINAL_SCREEN",
    "GNOME_TERMINAL_SERVICE",
    // The terminal's X window id: xterm, rxvt, st, VTE terminals, Konsole, kitty, Alacritty, Tilix,
    // Terminator.
    "WINDOWID",
    // Konsole (src/session/Session.cpp, src/ViewManager.cpp): its D-Bus unique name, the
    // session's and window's object paths, a random activation cookie, and a UUID per session.
    "KONSOLE_DBUS_SERVICE",
    "KONSOLE_DBUS_SESSION",
    "KONSOLE_DBUS_WINDOW",
    "KONSOLE_DBUS_ACTIVATION_COOKIE",
    "SHELL_SESSION_ID",
    // kitty (kitty/child.py, kitty/tabs.py): the window's id, kitty's PID, its remote-control
    // socket, and the key it generates when it starts.
    "KITTY_WINDOW_ID",
    "KITTY_PID",
    "KITTY_LISTEN_ON",
    "KITTY_PUBLIC_KEY",
    // Alacritty (alacritty_terminal/src/tty/unix.rs, alacritty/src/polling/ipc.rs,
    // alacritty/src/logging.rs): the window's id, and its socket and log file, both named after
    // its PID.
    "ALACRITTY_WINDOW_ID",
    "ALACRITTY_SOCKET",
    "ALACRITTY_LOG",
    // WezTerm (mux/src/domain.rs, mux/src/ssh.rs, wezterm-gui/src/main.rs): the pane's id and
    // the GUI's socket, named after its PID.
    "WEZTERM_PANE",
    "WEZTERM_REMOTE_PANE",
    "WEZTERM_UNIX_SOCKET",
    // Tilix (source/gx/tilix/terminal/terminal.d), Terminator (terminatorlib/terminal.py), Guake
    // (guake/terminal.py): a UUID per terminal. Terminator's TERMINATOR_DBUS_NAME and
    // TERMINATOR_DBUS_PATH stay in the key: they are derived from the display, not per terminal.
    "TILIX_ID",
    "TERMINATOR_UUID",
    "GUAKE_TAB_UUID",
    // Windows Terminal: a GUID per tab, which reaches WSL programs through WSLENV.
    "WT_SESSION",
    // A UUID per tab: macOS Terminal and iTerm2, and JetBrains IDEs' terminal
    // (LocalTerminalDirectRunner, which also sets TERMINAL_EMULATOR=JetBrains-JediTerm; that one is
    // the same every time and stays in the key).
    "TERM_SESSION_ID",
    // Multiplexers: tmux(1) (TMUX: socket, server PID and session; TMUX_PANE), GNU screen
    // (window.c: STY, the session; WINDOW; TERMCAP, which holds the window's size), zellij
    // (zellij-utils/src/envs.rs, zellij-server/src/os_input_output_unix.rs).
    "TMUX",
    "TMUX_PANE",
    "STY",
    "WINDOW",
    "TERMCAP",
    "ZELLIJ_SESSION_NAME",
    "ZELLIJ_PANE_ID",
    // Editors' terminals: Neovim's server address, which its terminal and jobstart() set as $NVIM
    // (older releases set NVIM_LISTEN_ADDRESS), and JetBrains' history file per terminal tab.
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "__INTELLIJ_COMMAND_HISTFILE__",
    // The loader's own logging and cache switches: they change what the loader says and whether
    // it uses the cache, never what a driver answers.
    "VK_LOADER_DEBUG",
    "VK_LOADER_EXPLAIN",
    "VK_LOADER_DRIVER_CACHE",
    "VK_LOADER_LAZY_DRIVERS",
];

/// Name prefixes left out: families that a program keeps for its own processes.
pub const PREFIXES: &[&str] = &[
    // VS Code (src/vs/base/common/processes.ts, sanitizeProcessEnvironment, removes `VSCODE_*`
    // as its own): IPC handles per window (VSCODE_GIT_IPC_HANDLE, VSCODE_IPC_HOOK_CLI), a nonce
    // per terminal (VSCODE_NONCE), and paths into its own installation. The set changes between
    // releases, and no driver reads any of them. TERM_PROGRAM(_VERSION) and GIT_ASKPASS stay in
    // the key.
    "VSCODE_",
];

/// Whether the variable named `name` (bytes before the first '=') identifies a launch, a login
/// session, a terminal, a tab, a window or a pane, and so is left out of the key.
pub fn identifies_a_launch(name: &[u8]) -> bool {
    EXACT.iter().any(|exact| exact.as_bytes() == name) || PREFIXES.iter().any(|prefix| name.starts_with(prefix.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_left_out(names: &[&str]) {
        for name in names {
            assert!(identifies_a_launch(name.as_bytes()), "{name} should be left out");
        }
    }

    fn all_kept(names: &[&str]) {
        for name in names {
            assert!(!identifies_a_launch(name.as_bytes()), "{name} should stay in the key");
        }
    }

    #[test]
    fn every_name_of_the_former_volatile_list_but_vk_loader_watch_is_left_out() {
        all_left_out(&[
            "_", "OLDPWD", "PWD", "SHLVL", "COLUMNS", "LINES", "INVOCATION_ID", "JOURNAL_STREAM", "SYSTEMD_EXEC_PID", "TERM_SESSION_ID", "WINDOWID",
            "XAUTHORITY", "KONSOLE_DBUS_SESSION", "KONSOLE_DBUS_WINDOW", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY",
            "GPG_AGENT_INFO", "VK_LOADER_DEBUG", "VK_LOADER_EXPLAIN", "VK_LOADER_DRIVER_CACHE", "VK_LOADER_LAZY_DRIVERS",
        ]);
    }

    #[test]
    fn shell_bookkeeping_is_left_out() {
        all_left_out(&["_", "OLDPWD", "PWD", "SHLVL", "COLUMNS", "LINES"]);
    }

    #[test]
    fn launcher_tokens_are_left_out() {
        all_left_out(&["DESKTOP_STARTUP_ID", "XDG_ACTIVATION_TOKEN", "GIO_LAUNCHED_DESKTOP_FILE", "GIO_LAUNCHED_DESKTOP_FILE_PID"]);
    }

    #[test]
    fn service_manager_variables_are_left_out_but_the_users_are_kept() {
        all_left_out(&[
            "INVOCATION_ID",
            "JOURNAL_STREAM",
            "SYSTEMD_EXEC_PID",
            "MANAGERPID",
            "LISTEN_FDS",
            "LISTEN_PIDFDID",
            "NOTIFY_SOCKET",
            "MEMORY_PRESSURE_WATCH",
            "TRIGGER_TIMER_MONOTONIC_USEC",
            "MONITOR_INVOCATION_ID",
            "EXIT_STATUS",
            "RUNTIME_DIRECTORY",
            "CREDENTIALS_DIRECTORY",
        ]);
        all_kept(&["PATH", "LANG", "USER", "LOGNAME", "HOME", "SHELL", "TERM", "XDG_RUNTIME_DIR"]);
    }

    #[test]
    fn login_session_identities_are_left_out_but_the_seat_and_session_kind_are_kept() {
        all_left_out(&[
            "XDG_SESSION_ID",
            "XDG_VTNR",
            "XDG_SESSION_PATH",
            "XDG_SESSION_COOKIE",
            "SESSION_MANAGER",
            "DESKTOP_AUTOSTART_ID",
            "DBUS_SESSION_BUS_ADDRESS",
            "DBUS_STARTER_ADDRESS",
            "XAUTHORITY",
            "KRB5CCNAME",
        ]);
        all_kept(&["XDG_SEAT", "XDG_SEAT_PATH", "XDG_SESSION_TYPE", "XDG_SESSION_CLASS", "XDG_SESSION_DESKTOP", "XDG_CURRENT_DESKTOP"]);
    }

    #[test]
    fn agents_and_remote_shells_are_left_out() {
        all_left_out(&["SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "GPG_TTY", "GNOME_KEYRING_PID"]);
        all_left_out(&["SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY", "SSH_ORIGINAL_COMMAND"]);
        all_kept(&["SSH_ASKPASS"]);
    }

    #[test]
    fn terminal_identities_are_left_out_but_terminal_kinds_and_versions_are_kept() {
        all_left_out(&[
            "GNOME_TERMINAL_SCREEN",
            "GNOME_TERMINAL_SERVICE",
            "WINDOWID",
            "KONSOLE_DBUS_SESSION",
            "KONSOLE_DBUS_WINDOW",
            "KONSOLE_DBUS_SERVICE",
            "SHELL_SESSION_ID",
            "KITTY_WINDOW_ID",
            "KITTY_PID",
            "KITTY_LISTEN_ON",
            "ALACRITTY_WINDOW_ID",
            "ALACRITTY_SOCKET",
            "WEZTERM_PANE",
            "WEZTERM_UNIX_SOCKET",
            "TILIX_ID",
            "TERMINATOR_UUID",
            "GUAKE_TAB_UUID",
            "WT_SESSION",
            "TERM_SESSION_ID",
        ]);
        all_kept(&[
            "TERM",
            "COLORTERM",
            "COLORFGBG",
            "VTE_VERSION",
            "TERM_PROGRAM",
            "TERM_PROGRAM_VERSION",
            "TERMINAL_EMULATOR",
            "KONSOLE_VERSION",
            "KITTY_INSTALLATION_DIR",
            "WEZTERM_CONFIG_FILE",
            "WT_PROFILE_ID",
            "TERMINATOR_DBUS_NAME",
            "XTERM_VERSION",
        ]);
    }

    #[test]
    fn multiplexer_identities_are_left_out() {
        all_left_out(&["TMUX", "TMUX_PANE", "STY", "WINDOW", "TERMCAP", "ZELLIJ_SESSION_NAME", "ZELLIJ_PANE_ID"]);
        all_kept(&["ZELLIJ", "TMUX_TMPDIR"]);
    }

    #[test]
    fn editor_terminal_identities_are_left_out() {
        all_left_out(&["VSCODE_GIT_IPC_HANDLE", "VSCODE_IPC_HOOK_CLI", "VSCODE_GIT_ASKPASS_MAIN", "VSCODE_NONCE", "VSCODE_INJECTION"]);
        all_left_out(&["NVIM", "NVIM_LISTEN_ADDRESS", "__INTELLIJ_COMMAND_HISTFILE__"]);
        all_kept(&["GIT_ASKPASS", "NVIM_APPNAME"]);
    }

    #[test]
    fn loader_switches_are_left_out_but_no_other_vulkan_variable_is() {
        all_left_out(&["VK_LOADER_DEBUG", "VK_LOADER_EXPLAIN", "VK_LOADER_DRIVER_CACHE", "VK_LOADER_LAZY_DRIVERS"]);
        all_kept(&["VK_LOADER_DEVICE_SELECT", "VK_ICD_FILENAMES", "VK_DRIVER_FILES", "VK_ADD_DRIVER_FILES", "VK_INSTANCE_LAYERS", "VK_LOADER_LAYERS_ENABLE"]);
    }

    #[test]
    fn driver_switches_are_kept() {
        all_kept(&[
            "MESA_LOADER_DRIVER_OVERRIDE",
            "MESA_VK_DEVICE_SELECT",
            "RADV_PERFTEST",
            "__NV_PRIME_RENDER_OFFLOAD",
            "__GLX_VENDOR_LIBRARY_NAME",
            "__GL_SHADER_DISK_CACHE_PATH",
            "DRI_PRIME",
            "LD_LIBRARY_PATH",
            "LD_PRELOAD",
            "DISPLAY",
            "WAYLAND_DISPLAY",
            "XDG_RUNTIME_DIR",
            "HOME",
            "XDG_CONFIG_HOME",
            "XDG_CACHE_HOME",
            "vk_require_etc2",
            "mesa_glthread",
        ]);
    }

    #[test]
    fn prefixes_match_only_at_the_start() {
        assert!(identifies_a_launch(b"VSCODE_GIT_IPC_HANDLE"));
        all_kept(&["MY_VSCODE_GIT_IPC_HANDLE", "VSCODE", "XVSCODE_NONCE", "vscode_nonce"]);
    }

    #[test]
    fn names_match_whole_and_by_case() {
        all_kept(&["TMUX_", "TMU", "XTMUX", "tmux", "Pwd", "_X", ""]);
    }

    #[test]
    fn tables_have_no_duplicates_and_no_entry_a_prefix_already_covers() {
        let mut names: Vec<&str> = EXACT.iter().chain(PREFIXES).copied().collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "a name is listed twice");
        for exact in EXACT {
            assert!(!PREFIXES.iter().any(|prefix| exact.starts_with(prefix)), "{exact} is covered by a prefix");
        }
    }

    #[test]
    fn tables_hold_only_upper_case_names_and_none_a_driver_reads() {
        const DRIVER_FAMILIES: &[&str] = &["MESA_", "RADV_", "ANV_", "NVK_", "TU_", "PAN_", "V3D_", "AMD_", "__NV_", "__GL", "DRI_", "LD_", "GALLIUM_", "LP_", "ZINK_", "XDG_CONFIG", "XDG_DATA", "XDG_CACHE"];
        for name in EXACT.iter().chain(PREFIXES) {
            assert!(!name.is_empty() && !name.contains('='), "{name:?} is not a name");
            // Driconf overrides are lower-case: no listed name may collide with one.
            assert!(!name.bytes().any(|b| b.is_ascii_lowercase()), "{name} has lower-case letters");
            assert!(!DRIVER_FAMILIES.iter().any(|family| name.starts_with(family)), "{name} is a driver's variable");
            assert!(!name.starts_with("VK_") || name.starts_with("VK_LOADER_"), "{name} is not the loader's own");
            assert!(!["DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "HOME", "VK_LOADER_DEVICE_SELECT"].contains(name), "{name} must stay in the key");
        }
    }
}
