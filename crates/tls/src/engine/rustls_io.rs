//! rustls's buffered connection as the engine drives it: records in (plaintext out, straight
//! from rustls's buffers), plaintext in (records out, in one buffer reserved for them).
//!
//! Same thread and ground rules as the engine (engine.rs).

use std::io::{BufRead, IoSlice, Write};

use bytes::{Bytes, BytesMut};
use rustls::Connection;

use super::silent_alert;
use crate::error::TlsError;

/// Processes `data` with rustls, appending any plaintext to `plain`.
/// Returns (still handshaking, the peer sent close_notify).
pub(super) fn feed_rustls(
    conn: &mut Connection,
    mut data: &[u8],
    plain: &mut BytesMut,
) -> Result<(bool, bool), TlsError> {
    let mut peer_closed = false;
    // The plaintext is never longer than the records carrying it: one reservation for the
    // whole read, not a regrowth (and copy of what came before) per record.
    plain.reserve(data.len());
    while !data.is_empty() {
        match conn.read_tls(&mut data) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(TlsError::Protocol(e.to_string())),
        }
        let state = match conn.process_new_packets() {
            Ok(state) => state,
            Err(e) => {
                silent_alert::candidate(&e);
                if conn.wants_write() {
                    silent_alert::alerted();
                }
                return Err(TlsError::from_rustls(&e));
            }
        };
        let n = state.plaintext_bytes_to_read();
        if n > 0 {
            take_plaintext(conn, n, plain)?;
        }
        peer_closed |= state.peer_has_closed();
    }
    if !conn.is_handshaking() && conn.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_3) {
        // rustls keeps its answer to the peer's KeyUpdate(update_requested) until it next
        // sends: a write of nothing queues it now (nothing else is sent), so the peer gets it
        // even when the application has nothing to say (tlsfuzzer's "app data split,
        // conversation with KeyUpdate msg" waits for it before finishing its request).
        let _ = conn.writer().write(&[]);
    }
    Ok((conn.is_handshaking(), peer_closed))
}

/// Appends the `n` bytes of decrypted plaintext rustls holds to `plain`, chunk by chunk
/// (straight from rustls's buffers: no zero-filled staging area).
fn take_plaintext(
    conn: &mut Connection,
    mut n: usize,
    plain: &mut BytesMut,
) -> Result<(), TlsError> {
    plain.reserve(n);
    let mut reader = conn.reader();
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

/// Hands all of `parts` (`total` bytes) to rustls in vectored writes.
pub(super) fn write_parts(
    conn: &mut Connection,
    parts: &[&[u8]],
    total: usize,
) -> Result<(), TlsError> {
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
        let n = conn
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

/// The records rustls has waiting to be sent, if any, in one buffer reserved for `capacity`.
pub(super) fn records_with_capacity(conn: &mut Connection, capacity: usize) -> Option<Bytes> {
    if !conn.wants_write() {
        return None;
    }
    let mut out = Vec::with_capacity(capacity);
    while conn.wants_write() {
        if conn.write_tls(&mut out).is_err() {
            break;
        }
    }
    (!out.is_empty()).then(|| Bytes::from(out))
}

/// The most bytes `plain` plaintext bytes take as records: full records of 16 KiB, each with
/// at most 29 bytes of header, explicit nonce and tag (TLS 1.2's AES-GCM; 1.3 adds 22).
pub(super) fn record_bytes(plain: usize) -> usize {
    const MAX_FRAGMENT: usize = 16 * 1024;
    const OVERHEAD: usize = 5 + 8 + 16;
    plain + plain.div_ceil(MAX_FRAGMENT).max(1) * OVERHEAD
}
