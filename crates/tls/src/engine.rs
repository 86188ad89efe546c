//! The rustls session of one connection, reduced to what the handler needs: feed records in
//! (plaintext out), encrypt plaintext (records out), take the records to send.

use std::io::{BufRead, IoSlice, Write};
use std::net::IpAddr;

use bytes::{Bytes, BytesMut};
use rustls::pki_types::ServerName;
use rustls::{ClientConnection, Connection, ServerConnection};

use crate::context::{Side, SslContext};
use crate::error::TlsError;
use crate::session::{describe, TlsSession};

pub(crate) struct Engine {
    conn: Connection,
    name: Option<ServerName<'static>>,
}

impl Engine {
    /// A session for `context`. A client verifies `server_name`, or else the peer's `ip`.
    pub(crate) fn new(
        context: &SslContext,
        server_name: Option<&str>,
        ip: Option<IpAddr>,
    ) -> Result<Engine, TlsError> {
        let (mut conn, name) = match &context.0.side {
            Side::Server { config, .. } => {
                let c = ServerConnection::new(config.clone())
                    .map_err(|e| TlsError::Other(e.to_string()))?;
                (Connection::Server(c), None)
            }
            Side::Client { config, .. } => {
                let name = match (server_name, ip) {
                    (Some(n), _) => ServerName::try_from(n.to_string())
                        .map_err(|_| TlsError::Config(format!("invalid server name {n:?}")))?,
                    (None, Some(ip)) => ServerName::IpAddress(ip.into()),
                    (None, None) => {
                        return Err(TlsError::Config(
                            "a client needs a server name (servername) or a connected address"
                                .into(),
                        ))
                    }
                };
                let c = ClientConnection::new(config.clone(), name.clone())
                    .map_err(|e| TlsError::Other(e.to_string()))?;
                (Connection::Client(c), Some(name))
            }
        };
        // Records are taken out after every write, so rustls never needs to buffer more.
        conn.set_buffer_limit(None);
        Ok(Engine { conn, name })
    }

    /// Processes `data` (records from the peer), appending any plaintext to `plain`.
    /// Returns (still handshaking, the peer sent close_notify).
    pub(crate) fn feed(
        &mut self,
        mut data: &[u8],
        plain: &mut BytesMut,
    ) -> Result<(bool, bool), TlsError> {
        let mut peer_closed = false;
        // The plaintext is never longer than the records carrying it: one reservation for the
        // whole read, not a regrowth (and copy of what came before) per record.
        plain.reserve(data.len());
        while !data.is_empty() {
            match self.conn.read_tls(&mut data) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => return Err(TlsError::Protocol(e.to_string())),
            }
            let state = self
                .conn
                .process_new_packets()
                .map_err(|e| TlsError::from_rustls(&e))?;
            let n = state.plaintext_bytes_to_read();
            if n > 0 {
                self.take_plaintext(n, plain)?;
            }
            peer_closed |= state.peer_has_closed();
        }
        Ok((self.conn.is_handshaking(), peer_closed))
    }

    /// Appends the `n` bytes of decrypted plaintext rustls holds to `plain`, chunk by chunk
    /// (straight from rustls's buffers: no zero-filled staging area).
    fn take_plaintext(&mut self, mut n: usize, plain: &mut BytesMut) -> Result<(), TlsError> {
        plain.reserve(n);
        let mut reader = self.conn.reader();
        while n > 0 {
            let chunk = reader
                .fill_buf()
                .map_err(|e| TlsError::Protocol(e.to_string()))?;
            let len = chunk.len().min(n);
            if len == 0 {
                break;
            }
            plain.extend_from_slice(&chunk[..len]);
            reader.consume(len);
            n -= len;
        }
        Ok(())
    }

    /// Encrypts `plain` (the parts in order, as one stream: records are filled across the
    /// parts' edges) into records.
    pub(crate) fn encrypt(&mut self, plain: &[&[u8]]) -> Result<Bytes, TlsError> {
        let total: usize = plain.iter().map(|p| p.len()).sum();
        if let [one] = plain {
            self.conn
                .writer()
                .write_all(one)
                .map_err(|_| TlsError::Closed)?;
        } else {
            self.write_parts(plain, total)?;
        }
        Ok(self
            .records_with_capacity(record_bytes(total))
            .unwrap_or_default())
    }

    /// Hands all of `parts` (`total` bytes) to rustls in vectored writes.
    fn write_parts(&mut self, parts: &[&[u8]], total: usize) -> Result<(), TlsError> {
        let mut done = 0;
        while done < total {
            // After the handshake rustls takes everything at once; the loop is for safety.
            let mut skip = done;
            let mut slices: Vec<IoSlice<'_>> = Vec::with_capacity(parts.len());
            for p in parts {
                if skip >= p.len() {
                    skip -= p.len();
                } else {
                    slices.push(IoSlice::new(&p[skip..]));
                    skip = 0;
                }
            }
            let n = self
                .conn
                .writer()
                .write_vectored(&slices)
                .map_err(|_| TlsError::Closed)?;
            if n == 0 {
                return Err(TlsError::Closed);
            }
            done += n;
        }
        Ok(())
    }

    /// The records waiting to be sent, if any.
    pub(crate) fn take_records(&mut self) -> Option<Bytes> {
        self.records_with_capacity(0)
    }

    /// The records waiting to be sent, if any, in one buffer reserved for `capacity` bytes.
    fn records_with_capacity(&mut self, capacity: usize) -> Option<Bytes> {
        if !self.conn.wants_write() {
            return None;
        }
        let mut out = Vec::with_capacity(capacity);
        while self.conn.wants_write() {
            if self.conn.write_tls(&mut out).is_err() {
                break;
            }
        }
        (!out.is_empty()).then(|| Bytes::from(out))
    }

    pub(crate) fn send_close_notify(&mut self) {
        self.conn.send_close_notify();
    }

    pub(crate) fn describe(&self, context: &SslContext) -> TlsSession {
        describe(&self.conn, &context.0.side, self.name.as_ref())
    }
}

/// The most bytes `plain` plaintext bytes take as records: full records of 16 KiB, each with
/// at most 29 bytes of header, explicit nonce and tag (TLS 1.2's AES-GCM; 1.3 adds 22).
fn record_bytes(plain: usize) -> usize {
    const MAX_FRAGMENT: usize = 16 * 1024;
    const OVERHEAD: usize = 5 + 8 + 16;
    plain + plain.div_ceil(MAX_FRAGMENT).max(1) * OVERHEAD
}
