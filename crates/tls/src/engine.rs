//! The TLS session of one connection, reduced to what the handler needs: feed records in
//! (plaintext out), encrypt plaintext (records out), take the records to send.
//!
//! Two paths (docs/decisions/0007-tls.md): rustls's buffered connection does everything for
//! clients, TLS 1.2 and servers without our record layer; a server whose client offers TLS 1.3
//! handshakes through rustls's unbuffered API and then protects records itself
//! (crate::record). The server decides on the client's first record (crate::hello).

use std::io::Write;
use std::net::IpAddr;

use bytes::{Bytes, BytesMut};
use rustls::pki_types::ServerName;
use rustls::{ClientConnection, Connection, ServerConnection};

use crate::capture::{EXPORTER_SECRET, SERVER_TRAFFIC_SECRET, STAPLE};
use crate::context::{Side, SslContext};
use crate::error::TlsError;
use crate::exporter::Exporter;
use crate::hello::{peek, Peek};
use crate::record::RecordLayer;
use crate::session::{describe, Negotiated, TlsSession};
use crate::small::{carve, with_scratch, SMALL_READ};

mod handshake13;
mod rustls_io;
mod silent_alert;

use handshake13::Handshake13;
use rustls_io::{feed_rustls, record_bytes, records_with_capacity, write_parts};

enum Mode {
    /// A server that may take our record layer: the client's first record is not whole yet.
    Undecided(BytesMut),
    Rustls(Box<Connection>),
    Handshake13(Box<Handshake13>),
    Own(Box<RecordLayer>),
    /// Failed while changing paths.
    Broken,
}

pub(crate) struct Engine {
    mode: Mode,
    context: SslContext,
    name: Option<ServerName<'static>>,
    /// Our record layer's session, read from rustls at the hand-over.
    negotiated: Option<Negotiated>,
    /// Records written while changing paths, for the next `take_records`.
    pending_out: Vec<u8>,
    /// Client: the OCSP response the server stapled (crate::capture).
    stapled: Option<Bytes>,
    /// Server on our record layer: the TLS 1.3 exporter secret (crate::exporter).
    exporter: Option<Exporter>,
    /// TLS 1.3 server, while handshaking: its first application traffic secret, the key of
    /// the alerts rustls does not send (silent_alert.rs).
    alert_key: Option<Vec<u8>>,
    /// Such an alert, sent after every other record.
    alert_out: Option<Vec<u8>>,
}

/// What one read yielded.
pub(crate) struct Fed {
    pub(crate) plain: Bytes,
    pub(crate) handshaking: bool,
    pub(crate) peer_closed: bool,
}

impl Engine {
    /// A session for `context`. A client verifies `server_name`, or else the peer's `ip`.
    pub(crate) fn new(
        context: &SslContext,
        server_name: Option<&str>,
        ip: Option<IpAddr>,
    ) -> Result<Engine, TlsError> {
        let (mode, name) = match &context.0.side {
            Side::Server {
                experimental_own_records: true,
                ..
            } => (Mode::Undecided(BytesMut::new()), None),
            Side::Server { config, .. } => {
                let c = ServerConnection::new(config.clone())
                    .map_err(|e| TlsError::Other(e.to_string()))?;
                (rustls_mode(Connection::Server(c)), None)
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
                (rustls_mode(Connection::Client(c)), Some(name))
            }
        };
        Ok(Engine {
            mode,
            context: context.clone(),
            name,
            negotiated: None,
            pending_out: Vec::new(),
            stapled: None,
            exporter: None,
            alert_key: None,
            alert_out: None,
        })
    }

    /// Processes `data` (records from the peer). While a client handshakes, the server's
    /// stapled OCSP response is caught on the way (crate::capture).
    pub(crate) fn feed(&mut self, data: Bytes) -> Result<Fed, TlsError> {
        let own_path = matches!(self.mode, Mode::Undecided(_) | Mode::Handshake13(_));
        let server_handshake = matches!(self.context.0.side, Side::Server { .. })
            && (own_path || matches!(&self.mode, Mode::Rustls(c) if c.is_handshaking()));
        if server_handshake {
            // Keep the exporter secret (towards our record layer) and the key of our alerts.
            let ((fed, exporter), key) =
                SERVER_TRAFFIC_SECRET.watch(|| EXPORTER_SECRET.watch(|| self.feed_records(data)));
            if let (Some(s), true) = (exporter, own_path) {
                self.exporter = Some(Exporter::new(s));
            }
            if key.is_some() {
                self.alert_key = key;
            }
            let silent = silent_alert::take();
            match &fed {
                Err(_) => self.add_silent_alert(silent),
                Ok(f) if !f.handshaking => self.alert_key = None,
                Ok(_) => {}
            }
            return fed;
        }
        let watching = matches!(&self.mode, Mode::Rustls(c) if c.is_handshaking())
            && matches!(self.context.0.side, Side::Client { .. });
        if !watching {
            return self.feed_records(data);
        }
        let (fed, stapled) = STAPLE.watch(|| self.feed_records(data));
        if let Some(r) = stapled {
            self.stapled = Some(Bytes::from(r));
        }
        fed
    }

    fn feed_records(&mut self, data: Bytes) -> Result<Fed, TlsError> {
        let mut fed = Fed {
            plain: Bytes::new(),
            handshaking: true,
            peer_closed: false,
        };
        let mut plain = BytesMut::new();
        match &mut self.mode {
            Mode::Own(layer) => {
                let opened = layer.open(data)?;
                fed.plain = opened.plain;
                fed.handshaking = false;
                fed.peer_closed = opened.peer_closed;
                return Ok(fed);
            }
            Mode::Rustls(conn) if data.len() <= SMALL_READ => {
                // Decrypted into the thread's scratch buffer, the plaintext carved out of it.
                let (p, flags) = with_scratch(|scratch| {
                    feed_rustls(conn, &data, scratch).map(|flags| (carve(scratch), flags))
                })?;
                fed.plain = p;
                (fed.handshaking, fed.peer_closed) = flags;
                return Ok(fed);
            }
            Mode::Rustls(conn) => {
                (fed.handshaking, fed.peer_closed) = feed_rustls(conn, &data, &mut plain)?;
            }
            Mode::Undecided(first) => {
                first.extend_from_slice(&data);
                let first = std::mem::take(first);
                self.decide(first, &mut fed, &mut plain)?;
            }
            Mode::Handshake13(hs) => {
                if let Some(peer_closed) = hs.feed(&data, &mut plain)? {
                    self.hand_over(&mut fed, &mut plain, peer_closed)?;
                }
            }
            Mode::Broken => return Err(TlsError::Closed),
        }
        fed.plain = plain.freeze();
        Ok(fed)
    }

    /// rustls failed without sending the alert RFC 8446 names (`alert`): ours, sealed under
    /// the key rustls would have used, or in plaintext before the server said hello
    /// (silent_alert.rs).
    fn add_silent_alert(&mut self, alert: Option<rustls::AlertDescription>) {
        // Only while handshaking: once the client's Finished was taken, rustls has sealed
        // session tickets under the key, and sequence number 0 is spent.
        let (suite, version, handshaking) = match &self.mode {
            Mode::Rustls(c) => (
                c.negotiated_cipher_suite(),
                c.protocol_version(),
                c.is_handshaking(),
            ),
            Mode::Handshake13(hs) => (hs.suite(), hs.version(), hs.is_handshaking()),
            _ => (None, None, false),
        };
        self.alert_out = match (alert, &self.alert_key, suite, version) {
            (Some(alert), Some(key), Some(suite), _) if handshaking => {
                silent_alert::sealed(key, suite, alert)
            }
            (Some(alert), None, _, None) => Some(silent_alert::plaintext(alert)),
            _ => None,
        };
        self.alert_key = None;
    }

    /// A server's path, once the client's first record is whole.
    fn decide(
        &mut self,
        first: BytesMut,
        fed: &mut Fed,
        plain: &mut BytesMut,
    ) -> Result<(), TlsError> {
        let Side::Server { config, .. } = &self.context.0.side else {
            return Err(TlsError::Closed);
        };
        match peek(&first) {
            Peek::More => self.mode = Mode::Undecided(first),
            Peek::Tls13 { server_name } => {
                let mut hs = Handshake13::new(config, server_name)?;
                let done = hs.feed(&first, plain);
                self.mode = Mode::Handshake13(Box::new(hs));
                if let Some(peer_closed) = done? {
                    self.hand_over(fed, plain, peer_closed)?;
                }
            }
            Peek::Other => {
                let c = ServerConnection::new(config.clone())
                    .map_err(|e| TlsError::Other(e.to_string()))?;
                let mut conn = Box::new(Connection::Server(c));
                conn.set_buffer_limit(None);
                self.mode = Mode::Rustls(conn);
                let Mode::Rustls(conn) = &mut self.mode else {
                    return Err(TlsError::Closed);
                };
                (fed.handshaking, fed.peer_closed) = feed_rustls(conn, &first, plain)?;
            }
        }
        Ok(())
    }

    /// The TLS 1.3 handshake completed: records from now on are ours.
    fn hand_over(
        &mut self,
        fed: &mut Fed,
        plain: &mut BytesMut,
        peer_closed: bool,
    ) -> Result<(), TlsError> {
        let Mode::Handshake13(hs) = std::mem::replace(&mut self.mode, Mode::Broken) else {
            return Err(TlsError::Closed);
        };
        let done = hs.finish()?;
        self.pending_out.extend_from_slice(&done.outgoing);
        self.negotiated = Some(done.negotiated);
        let mut layer = Box::new(done.layer);
        fed.handshaking = false;
        if peer_closed {
            layer.peer_closed();
            fed.peer_closed = true;
            self.mode = Mode::Own(layer);
        } else if !done.leftover.is_empty() {
            let opened = layer.open(done.leftover.freeze());
            self.mode = Mode::Own(layer);
            let opened = opened?;
            plain.extend_from_slice(&opened.plain);
            fed.peer_closed = opened.peer_closed;
        } else {
            self.mode = Mode::Own(layer);
        }
        Ok(())
    }

    /// Encrypts `plain` (the parts in order, as one stream: records are filled across the
    /// parts' edges) into records.
    /// Records sealed before (the handshake's last ones, control records) go first: their
    /// sequence numbers come before these.
    pub(crate) fn encrypt(&mut self, plain: &[&[u8]]) -> Result<Bytes, TlsError> {
        let conn = match &mut self.mode {
            Mode::Own(layer) => {
                let control = layer.take_control();
                let sealed = layer.seal(plain)?;
                if self.pending_out.is_empty() && control.is_none() {
                    return Ok(sealed);
                }
                let mut out = std::mem::take(&mut self.pending_out);
                if let Some(control) = control {
                    out.extend_from_slice(&control);
                }
                out.extend_from_slice(&sealed);
                return Ok(Bytes::from(out));
            }
            Mode::Rustls(conn) => conn,
            _ => return Err(TlsError::Closed),
        };
        let total: usize = plain.iter().map(|p| p.len()).sum();
        if let [one] = plain {
            conn.writer().write_all(one).map_err(|_| TlsError::Closed)?;
        } else {
            write_parts(conn, plain, total)?;
        }
        Ok(records_with_capacity(conn, record_bytes(total)).unwrap_or_default())
    }

    /// The records waiting to be sent, if any.
    pub(crate) fn take_records(&mut self) -> Option<Bytes> {
        let now = match &mut self.mode {
            Mode::Own(layer) => layer.take_control(),
            Mode::Rustls(conn) => records_with_capacity(conn, 0),
            Mode::Handshake13(hs) => {
                (!hs.outgoing.is_empty()).then(|| Bytes::from(std::mem::take(&mut hs.outgoing)))
            }
            Mode::Undecided(_) | Mode::Broken => None,
        };
        if self.pending_out.is_empty() && self.alert_out.is_none() {
            return now;
        }
        let mut out = std::mem::take(&mut self.pending_out);
        if let Some(now) = now {
            out.extend_from_slice(&now);
        }
        if let Some(alert) = self.alert_out.take() {
            out.extend_from_slice(&alert);
        }
        Some(Bytes::from(out))
    }

    /// Queues a KeyUpdate(update_requested) (TLS 1.3, after the handshake): our send key
    /// moves on after it, and the peer answers with its own.
    pub(crate) fn request_key_update(&mut self) -> Result<(), TlsError> {
        match &mut self.mode {
            Mode::Own(layer) => layer.request_key_update(),
            Mode::Rustls(conn)
                if conn.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_3) =>
            {
                conn.refresh_traffic_keys()
                    .map_err(|e| TlsError::from_rustls(&e))
            }
            Mode::Rustls(_) => Err(TlsError::InvalidState("a KeyUpdate needs TLS 1.3".into())),
            _ => Err(TlsError::InvalidState(
                "a KeyUpdate before the handshake completed".into(),
            )),
        }
    }

    /// Our close_notify. A server closing mid-handshake sends none on either path (as it
    /// did through the unbuffered API): a STARTTLS server that refuses plaintext injected
    /// after the command closes before any TLS record was exchanged, and its peer must see
    /// nothing but the close.
    pub(crate) fn send_close_notify(&mut self) {
        let server = matches!(self.context.0.side, Side::Server { .. });
        match &mut self.mode {
            Mode::Own(layer) => layer.close_notify(),
            Mode::Rustls(conn) if server && conn.is_handshaking() => {}
            Mode::Rustls(conn) => conn.send_close_notify(),
            // Mid-handshake through the unbuffered API: the connection just closes.
            _ => {}
        }
    }

    /// Fills `out` with keying material exported under `label` and `context` (RFC 5705,
    /// RFC 8446 §7.5), once the handshake completed.
    pub(crate) fn export_keying_material(
        &self,
        out: &mut [u8],
        label: &[u8],
        context: Option<&[u8]>,
    ) -> Result<(), TlsError> {
        match (&self.mode, &self.exporter) {
            (Mode::Rustls(conn), _) => conn
                .export_keying_material(&mut *out, label, context)
                .map(|_| ())
                .map_err(|e| TlsError::InvalidState(format!("exportKeyingMaterial: {e}"))),
            (Mode::Own(_), Some(e)) => e.export(out, label, context),
            _ => Err(TlsError::InvalidState(
                "exportKeyingMaterial: the handshake has not completed".into(),
            )),
        }
    }

    /// What the session negotiated, judged by the context it was made from (which, for a
    /// server that asked for its context by name, is the chosen one).
    pub(crate) fn describe(&self) -> TlsSession {
        let side = &self.context.0.side;
        let mut session = match (&self.mode, &self.negotiated) {
            (Mode::Rustls(conn), _) => describe(conn, side, self.name.as_ref()),
            (_, Some(n)) => n.describe(side, self.name.as_ref()),
            (_, None) => TlsSession {
                protocol: "unknown",
                cipher: String::new(),
                alpn_protocol: None,
                server_name: None,
                peer_certificates: Vec::new(),
                resumed: false,
                authorized: false,
                authorization_error: None,
                key_exchange: None,
                ocsp_response: None,
            },
        };
        session.ocsp_response = self.stapled.clone();
        session
    }
}

fn rustls_mode(mut conn: Connection) -> Mode {
    // Records are taken out after every write, so rustls never needs to buffer more.
    conn.set_buffer_limit(None);
    Mode::Rustls(Box::new(conn))
}
