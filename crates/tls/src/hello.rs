//! A look at a client's first record, before rustls sees it, to choose the server's path: a
//! ClientHello offering TLS 1.3 goes through rustls's unbuffered handshake, whose secrets then
//! move to our own record layer (crate::record); anything else (TLS 1.2 clients, a hello split
//! across records, garbage) goes through rustls's buffered connection, which judges it.
//! This only reads; nothing here decides what is valid.

/// What the first bytes of a connection are.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Peek {
    /// The first record is not complete yet.
    More,
    /// A whole ClientHello in one record offering TLS 1.3, with its server name (SNI), if any.
    Tls13 { server_name: Option<String> },
    /// Anything else.
    Other,
}

/// Records are at most 2^14 bytes of plaintext (RFC 8446 §5.1); a longer first record is
/// rustls's to reject.
const MAX_FIRST_RECORD: usize = (1 << 14) + 256;

pub(crate) fn peek(buf: &[u8]) -> Peek {
    if buf.len() < 5 {
        return Peek::More;
    }
    let len = usize::from(u16::from_be_bytes([buf[3], buf[4]]));
    if buf[0] != 22 || len > MAX_FIRST_RECORD {
        return Peek::Other;
    }
    let Some(record) = buf.get(5..5 + len) else {
        return Peek::More;
    };
    client_hello(record).unwrap_or(Peek::Other)
}

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<usize> {
        self.take(1).map(|b| usize::from(b[0]))
    }
    fn u16(&mut self) -> Option<usize> {
        self.take(2)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
    }
    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()?;
        self.take(n)
    }
    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()?;
        self.take(n)
    }
}

fn client_hello(record: &[u8]) -> Option<Peek> {
    let mut r = Cursor(record);
    if r.u8()? != 1 {
        return None; // not a ClientHello
    }
    let len = r.take(3)?;
    let len = u32::from_be_bytes([0, len[0], len[1], len[2]]) as usize;
    let mut h = Cursor(r.take(len)?); // a hello continued in another record: None
    h.take(2 + 32)?; // legacy_version, random
    h.vec8()?; // legacy_session_id
    h.vec16()?; // cipher_suites
    h.vec8()?; // legacy_compression_methods
    let mut exts = Cursor(h.vec16()?);
    let (mut tls13, mut server_name) = (false, None);
    while !exts.0.is_empty() {
        let kind = exts.u16()?;
        let mut body = Cursor(exts.vec16()?);
        match kind {
            43 => {
                // supported_versions
                let mut versions = Cursor(body.vec8()?);
                while let Some(v) = versions.u16() {
                    tls13 |= v == 0x0304;
                }
            }
            0 => server_name = host_name(&mut body),
            _ => {}
        }
    }
    Some(if tls13 {
        Peek::Tls13 { server_name }
    } else {
        Peek::Other
    })
}

/// The host_name entry of a server_name extension, as rustls keeps it (a DNS name, lower case;
/// an IP address literal is no server name).
fn host_name(body: &mut Cursor<'_>) -> Option<String> {
    let mut list = Cursor(body.vec16()?);
    while !list.0.is_empty() {
        let kind = list.u8()?;
        let name = list.vec16()?;
        if kind == 0 {
            let name = std::str::from_utf8(name).ok()?;
            let dns = rustls::pki_types::DnsName::try_from(name).ok()?;
            return Some(dns.to_lowercase_owned().as_ref().to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello(exts: &[u8]) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[7; 32]);
        body.extend_from_slice(&[0, 0, 2, 0x13, 0x01, 1, 0]);
        body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
        body.extend_from_slice(exts);
        let mut hs = vec![1, 0];
        hs.extend_from_slice(&(body.len() as u16).to_be_bytes());
        hs.extend_from_slice(&body);
        let mut rec = vec![22, 3, 1];
        rec.extend_from_slice(&(hs.len() as u16).to_be_bytes());
        rec.extend_from_slice(&hs);
        rec
    }

    #[test]
    fn a_hello_offering_tls13_is_told_apart_with_its_server_name() {
        let mut exts = vec![0, 43, 0, 5, 4, 3, 4, 3, 3];
        exts.extend_from_slice(&[0, 0, 0, 14, 0, 12, 0, 0, 9]);
        exts.extend_from_slice(b"Localhost");
        let rec = hello(&exts);
        assert_eq!(
            peek(&rec),
            Peek::Tls13 {
                server_name: Some("localhost".into())
            }
        );
        assert_eq!(peek(&rec[..rec.len() - 1]), Peek::More);
    }

    #[test]
    fn a_tls12_hello_or_garbage_goes_to_rustls() {
        assert_eq!(peek(&hello(&[0, 43, 0, 3, 2, 3, 3])), Peek::Other);
        assert_eq!(peek(b"GET / HTTP/1.1\r\n"), Peek::Other);
        assert_eq!(peek(&[22, 3, 1]), Peek::More);
    }
}
