//! The key log: the secrets of every handshake made with a context, appended to a file in the
//! NSS key log format that Wireshark reads (node's `--tls-keylog=FILE`, `SSLKEYLOGFILE`).
//! For debugging only: whoever reads the file can decrypt the captured traffic.
//!
//! Ground rules: one file per context, shared by every connection and thread that uses it;
//! each line is written whole under a lock, so lines from concurrent handshakes never mix.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::TlsError;

pub(crate) struct KeyLogFile {
    path: PathBuf,
    file: Mutex<File>,
}

impl KeyLogFile {
    /// Opens `path` for appending (made if missing).
    pub(crate) fn open(path: &Path) -> Result<KeyLogFile, TlsError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| TlsError::Config(format!("keyLogFile: cannot open {path:?}: {e}")))?;
        Ok(KeyLogFile {
            path: path.to_owned(),
            file: Mutex::new(file),
        })
    }
}

/// `label client_random secret`, hex, one line (the NSS format).
pub(crate) fn line(label: &str, client_random: &[u8], secret: &[u8]) -> String {
    let mut s = String::with_capacity(label.len() + 2 * (client_random.len() + secret.len()) + 3);
    s.push_str(label);
    s.push(' ');
    for b in client_random {
        let _ = write!(s, "{b:02x}");
    }
    s.push(' ');
    for b in secret {
        let _ = write!(s, "{b:02x}");
    }
    s.push('\n');
    s
}

impl rustls::KeyLog for KeyLogFile {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        let line = line(label, client_random, secret);
        // A poisoned lock only means another thread panicked mid-write: keep logging. A failed
        // write (disk full) must not fail the handshake; the log is a debugging aid.
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let _ = file.write_all(line.as_bytes());
    }
}

impl std::fmt::Debug for KeyLogFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyLogFile")
            .field("path", &self.path)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_are_label_then_hex_random_and_secret() {
        assert_eq!(
            super::line("CLIENT_RANDOM", &[0x00, 0xab], &[0x0f]),
            "CLIENT_RANDOM 00ab 0f\n"
        );
    }
}
