//! The rustls session of one connection, reduced to what the handler needs: feed records in
//! (plaintext out), encrypt plaintext (records out), take the records to send.

use std::io::{BufRead, Write};
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

    /// Encrypts `plain` into records.
    pub(crate) fn encrypt(&mut self, plain: &[u8]) -> Result<Bytes, TlsError> {
        self.conn
            .writer()
            .write_all(plain)
            .map_err(|_| TlsError::Closed)?;
        Ok(self.take_records().unwrap_or_default())
    }

    /// The records waiting to be sent, if any.
    pub(crate) fn take_records(&mut self) -> Option<Bytes> {
        if !self.conn.wants_write() {
            return None;
        }
        let mut out = Vec::new();
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
