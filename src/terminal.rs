//! The terminal: its width, and its keys for the live view. The binary's
//! own: the core never speaks to a terminal.

/// The width of the terminal stdout writes to, in columns: `None` when
/// stdout is not a terminal (a pipe, a file) or the system does not say.
pub fn terminal_width() -> Option<usize> {
    use std::io::IsTerminal;
    let out = std::io::stdout();
    if !out.is_terminal() {
        return None;
    }
    #[cfg(unix)]
    {
        rustix::termios::tcgetwinsize(&out)
            .ok()
            .map(|w| usize::from(w.ws_col))
            .filter(|&w| w > 0)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The width text for people fits: `COLUMNS` when it is set to a usable
/// width (`columns`, already read), else the terminal's, else 80.
pub fn screen_width(columns: Option<usize>) -> usize {
    columns.or_else(terminal_width).unwrap_or(80)
}

/// The terminal of stdin set to hand bsi each key as it is pressed (no
/// line editing, no echo, Ctrl-C as a key): for `bsi status --watch`. Put
/// back as it was when dropped.
pub struct KeysMode {
    #[cfg(unix)]
    saved: rustix::termios::Termios,
}

impl KeysMode {
    /// Sets stdin's terminal to hand over keys; `None` when stdin is not a
    /// terminal (or the system does not allow it): keys are then read a
    /// line at a time, and Ctrl-C ends bsi as usual.
    pub fn enter() -> Option<KeysMode> {
        #[cfg(unix)]
        {
            use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
            let stdin = std::io::stdin();
            let saved = tcgetattr(&stdin).ok()?;
            let mut keys = saved.clone();
            keys.local_modes
                .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
            tcsetattr(&stdin, OptionalActions::Now, &keys).ok()?;
            Some(KeysMode { saved })
        }
        #[cfg(not(unix))]
        {
            None
        }
    }
}

impl Drop for KeysMode {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            use rustix::termios::{OptionalActions, tcsetattr};
            let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.saved);
        }
    }
}

/// The keys typed on stdin, one byte each, read by a thread of their own
/// (a blocked read never holds up a redraw). The channel closes at the end
/// of stdin.
pub fn keys() -> std::sync::mpsc::Receiver<u8> {
    use std::io::Read;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin();
        let mut byte = [0u8; 1];
        while let Ok(1) = stdin.read(&mut byte) {
            if tx.send(byte[0]).is_err() {
                break;
            }
        }
    });
    rx
}
