//! A server's TLS 1.3 handshake through rustls's unbuffered API, whose end hands the traffic
//! secrets to our record layer (`dangerous_into_kernel_connection`: rustls keeps the key
//! schedule for KeyUpdates). rustls writes every record of the handshake, including the
//! session tickets that follow the client's Finished, before it reports the handshake done.
//!
//! rustls is given one whole record at a time, and nothing after the record that completed
//! the handshake: its unbuffered connection goes on processing whatever it holds before it
//! reports the handshake done, so a KeyUpdate(update_requested) in the same read as the
//! client's Finished was taken by rustls, which moved its send key on and queued its own
//! KeyUpdate; `dangerous_into_kernel_connection` then handed over the *next* send key and
//! dropped the queued KeyUpdate, and the client could not open our next record (tlsfuzzer's
//! "post-handshake KeyUpdate msg with update_request", issue 35). The Finished must end its
//! record (rustls checks that the handshake is aligned at the key change), so every record
//! after it, whole or begun, goes to our layer untouched.

use bytes::BytesMut;
use rustls::server::UnbufferedServerConnection;
use rustls::unbuffered::{ConnectionState, EncodeError, UnbufferedStatus};
use rustls::ServerConfig;
use std::sync::Arc;

use crate::error::TlsError;
use crate::record::{RecordLayer, HEADER, MAX_CIPHER};
use crate::session::Negotiated;

pub(crate) struct Handshake13 {
    conn: UnbufferedServerConnection,
    /// Records given to rustls and not yet consumed by it.
    incoming: Vec<u8>,
    /// Records received and not yet given to rustls (whole or begun).
    queued: Vec<u8>,
    /// Records rustls wrote, for the handler to take.
    pub(crate) outgoing: Vec<u8>,
    server_name: Option<String>,
}

/// The handshake's end: what it negotiated and the record layer that goes on.
pub(crate) struct Done {
    pub(crate) negotiated: Negotiated,
    pub(crate) layer: RecordLayer,
    /// Bytes after the last record rustls consumed.
    pub(crate) leftover: BytesMut,
    /// The handshake's last records (session tickets), not taken yet.
    pub(crate) outgoing: Vec<u8>,
}

enum Step {
    Again,
    Blocked,
    /// The handshake completed (and the peer already sent close_notify).
    Traffic {
        peer_closed: bool,
    },
    PeerClosed,
}

impl Handshake13 {
    pub(crate) fn new(
        config: &Arc<ServerConfig>,
        server_name: Option<String>,
    ) -> Result<Handshake13, TlsError> {
        let conn = UnbufferedServerConnection::new(config.clone())
            .map_err(|e| TlsError::Other(e.to_string()))?;
        Ok(Handshake13 {
            conn,
            incoming: Vec::new(),
            queued: Vec::new(),
            outgoing: Vec::new(),
            server_name,
        })
    }

    /// Processes `data`, appending any application data to `plain`. Once the handshake
    /// completed (then [`Handshake13::finish`]): whether the peer also sent close_notify.
    pub(crate) fn feed(
        &mut self,
        data: &[u8],
        plain: &mut BytesMut,
    ) -> Result<Option<bool>, TlsError> {
        self.queued.extend_from_slice(data);
        loop {
            match self.step(plain) {
                Ok(Step::Again) => {}
                Ok(Step::Blocked) => {
                    if !self.give_record() {
                        return Ok(None);
                    }
                }
                Ok(Step::Traffic { peer_closed }) => return Ok(Some(peer_closed)),
                // close_notify in the same read as the client's Finished.
                Ok(Step::PeerClosed) if !self.conn.is_handshaking() => return Ok(Some(true)),
                Ok(Step::PeerClosed) => return Err(TlsError::ClosedDuringHandshake),
                Err(e) => {
                    let before = self.outgoing.len();
                    self.write_alerts();
                    if self.outgoing.len() > before {
                        super::silent_alert::alerted();
                    }
                    return Err(e);
                }
            }
        }
    }

    /// Moves the next record from `queued` to rustls's input, when it is whole (or its
    /// header announces more than a record may hold: rustls judges that at once). False when
    /// there is none.
    fn give_record(&mut self) -> bool {
        let Some(header) = self.queued.get(..HEADER) else {
            return false;
        };
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        let end = if len > MAX_CIPHER {
            self.queued.len()
        } else if self.queued.len() >= HEADER + len {
            HEADER + len
        } else {
            return false;
        };
        self.incoming.extend(self.queued.drain(..end));
        true
    }

    fn step(&mut self, plain: &mut BytesMut) -> Result<Step, TlsError> {
        let UnbufferedStatus { mut discard, state } =
            self.conn.process_tls_records(&mut self.incoming);
        let step = match state {
            Err(e) => Err(failed(&e)),
            Ok(ConnectionState::EncodeTlsData(mut enc)) => {
                encode(&mut self.outgoing, |buf| enc.encode(buf)).map(|()| Step::Again)
            }
            Ok(ConnectionState::TransmitTlsData(t)) => {
                // Written to `outgoing`; the handler sends it after this read.
                t.done();
                Ok(Step::Again)
            }
            Ok(ConnectionState::ReadTraffic(mut r)) => {
                let mut result = Ok(Step::Again);
                while let Some(record) = r.next_record() {
                    match record {
                        Ok(record) => {
                            discard += record.discard;
                            plain.extend_from_slice(record.payload);
                        }
                        Err(e) => {
                            result = Err(failed(&e));
                            break;
                        }
                    }
                }
                result
            }
            Ok(ConnectionState::BlockedHandshake) => Ok(Step::Blocked),
            Ok(ConnectionState::WriteTraffic(_)) => Ok(Step::Traffic { peer_closed: false }),
            Ok(ConnectionState::PeerClosed | ConnectionState::Closed) => Ok(Step::PeerClosed),
            Ok(_) => Err(TlsError::Protocol(
                "unexpected data in the handshake".into(),
            )),
        };
        // Consumed bytes go whatever the outcome: rustls's positions refer to what is left.
        self.incoming.drain(..discard);
        step
    }

    /// The fatal alert rustls queued with an error, into `outgoing`. One call only: rustls
    /// hands out what it queued before it reads on, and reading on after a fatal alert would
    /// judge the rest of the input again.
    fn write_alerts(&mut self) {
        let UnbufferedStatus { discard, state } = self.conn.process_tls_records(&mut self.incoming);
        if let Ok(ConnectionState::EncodeTlsData(mut enc)) = state {
            let _ = encode(&mut self.outgoing, |buf| enc.encode(buf));
        }
        self.incoming.drain(..discard);
    }

    /// The suite negotiated so far.
    pub(crate) fn suite(&self) -> Option<rustls::SupportedCipherSuite> {
        self.conn.negotiated_cipher_suite()
    }

    /// Still before the client's Finished.
    pub(crate) fn is_handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    /// The version negotiated so far (none before the server chose one: nothing sent yet).
    pub(crate) fn version(&self) -> Option<rustls::ProtocolVersion> {
        self.conn.protocol_version()
    }

    /// Hands the session over to our record layer (the handshake's records stay in
    /// `outgoing`, for the handler to take).
    pub(crate) fn finish(self) -> Result<Done, TlsError> {
        if !self.incoming.is_empty() {
            // Cannot happen (rustls consumed the Finished's record whole); never hand over
            // bytes rustls may have decrypted in place.
            return Err(TlsError::Protocol(
                "unexpected_message: records left in the handshake's input".into(),
            ));
        }
        let negotiated = Negotiated::of(&self.conn, self.server_name);
        let leftover = BytesMut::from(&self.queued[..]);
        let (secrets, kernel) = self
            .conn
            .dangerous_into_kernel_connection()
            .map_err(|e| TlsError::Other(e.to_string()))?;
        Ok(Done {
            negotiated,
            layer: RecordLayer::new(secrets, kernel)?,
            leftover,
            outgoing: self.outgoing,
        })
    }
}

/// rustls failed with `e` (its alert, if it queued one, is written next).
fn failed(e: &rustls::Error) -> TlsError {
    super::silent_alert::candidate(e);
    TlsError::from_rustls(e)
}

/// Appends what `encode` writes to `out`, growing it as rustls asks.
fn encode(
    out: &mut Vec<u8>,
    mut encode: impl FnMut(&mut [u8]) -> Result<usize, EncodeError>,
) -> Result<(), TlsError> {
    let start = out.len();
    let mut room = 4096;
    loop {
        out.resize(start + room, 0);
        match encode(&mut out[start..]) {
            Ok(n) => {
                out.truncate(start + n);
                return Ok(());
            }
            Err(EncodeError::InsufficientSize(s)) => room = s.required_size,
            Err(e) => {
                out.truncate(start);
                return Err(TlsError::Other(e.to_string()));
            }
        }
    }
}
