//! A server's TLS 1.3 handshake through rustls's unbuffered API, whose end hands the traffic
//! secrets to our record layer (`dangerous_into_kernel_connection`: rustls keeps the key
//! schedule for KeyUpdates). rustls writes every record of the handshake, including the
//! session tickets that follow the client's Finished, before it reports the handshake done;
//! application data that came in the same read as the Finished is decrypted by rustls (and
//! counted in the sequence number it hands over); the start of a record left over goes to our
//! layer.

use bytes::BytesMut;
use rustls::server::UnbufferedServerConnection;
use rustls::unbuffered::{ConnectionState, EncodeError, UnbufferedStatus};
use rustls::ServerConfig;
use std::sync::Arc;

use crate::error::TlsError;
use crate::record::RecordLayer;
use crate::session::Negotiated;

pub(crate) struct Handshake13 {
    conn: UnbufferedServerConnection,
    /// Records received and not yet consumed by rustls.
    incoming: Vec<u8>,
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
        self.incoming.extend_from_slice(data);
        loop {
            match self.step(plain) {
                Ok(Step::Again) => {}
                Ok(Step::Blocked) => return Ok(None),
                Ok(Step::Traffic { peer_closed }) => return Ok(Some(peer_closed)),
                // close_notify in the same read as the client's Finished.
                Ok(Step::PeerClosed) if !self.conn.is_handshaking() => return Ok(Some(true)),
                Ok(Step::PeerClosed) => return Err(TlsError::ClosedDuringHandshake),
                Err(e) => {
                    self.write_alerts();
                    return Err(e);
                }
            }
        }
    }

    fn step(&mut self, plain: &mut BytesMut) -> Result<Step, TlsError> {
        let UnbufferedStatus { mut discard, state } =
            self.conn.process_tls_records(&mut self.incoming);
        let step = match state {
            Err(e) => Err(TlsError::from_rustls(&e)),
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
                            result = Err(TlsError::from_rustls(&e));
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

    /// Hands the session over to our record layer (the handshake's records stay in
    /// `outgoing`, for the handler to take).
    pub(crate) fn finish(self) -> Result<Done, TlsError> {
        let negotiated = Negotiated::of(&self.conn, self.server_name);
        let leftover = BytesMut::from(&self.incoming[..]);
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
