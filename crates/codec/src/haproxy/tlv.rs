//! What the version 2 TLVs say, by the specification's types (section 2.2.1 onward) and the
//! cloud load balancers' own: typed views over [`HAProxyMessage::tlvs`], which stay raw. A
//! value that breaks its type's format reads as absent (the header itself was valid), and
//! only the first TLV of a type counts.
//!
//! The CRC32C TLV is not a view: when a header carries one, the parser checks it
//! (crate::haproxy::parse) and refuses a header it does not match.

use super::HAProxyMessage;

/// The TLV types netloop reads.
pub mod kind {
    /// The application protocol the client negotiated (ALPN), e.g. `h2`.
    pub const ALPN: u8 = 0x01;
    /// The host name the client asked for (TLS SNI or HTTP Host), UTF-8.
    pub const AUTHORITY: u8 = 0x02;
    /// A CRC32C of the whole header, big-endian, computed with this field zeroed.
    pub const CRC32C: u8 = 0x03;
    /// Padding, to be ignored.
    pub const NOOP: u8 = 0x04;
    /// An opaque id of the connection, up to 128 bytes.
    pub const UNIQUE_ID: u8 = 0x05;
    /// The TLS the proxy terminated: a client byte, a verify result, then sub-TLVs.
    pub const SSL: u8 = 0x20;
    /// Inside `SSL`: the TLS version, e.g. `TLSv1.3`.
    pub const SSL_VERSION: u8 = 0x21;
    /// Inside `SSL`: the client certificate's subject CN.
    pub const SSL_CN: u8 = 0x22;
    /// Inside `SSL`: the cipher, e.g. `TLS_AES_256_GCM_SHA384`.
    pub const SSL_CIPHER: u8 = 0x23;
    /// Inside `SSL`: the signature algorithm of the client certificate.
    pub const SSL_SIG_ALG: u8 = 0x24;
    /// Inside `SSL`: the key algorithm of the client certificate.
    pub const SSL_KEY_ALG: u8 = 0x25;
    /// The network namespace the connection came from (Linux).
    pub const NETNS: u8 = 0x30;
    /// AWS (Network Load Balancer, PrivateLink): subtype `0x01`, the VPC endpoint id.
    pub const AWS: u8 = 0xEA;
    /// Azure (Private Link service): subtype `0x01`, the private endpoint's link id.
    pub const AZURE: u8 = 0xEE;
    /// Google Cloud (Private Service Connect): the connection id.
    pub const GCP: u8 = 0xE0;
}

/// Client flags of the SSL TLV.
pub mod ssl_client {
    /// The client connected over TLS.
    pub const SSL: u8 = 0x01;
    /// The client presented a certificate on this connection.
    pub const CERT_CONN: u8 = 0x02;
    /// The client presented a certificate at least once in this TLS session.
    pub const CERT_SESS: u8 = 0x04;
}

/// The TLS a proxy terminated (the SSL TLV).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HAProxySsl {
    /// [`ssl_client`] flags.
    pub client: u8,
    /// The proxy's verification of the client certificate: 0 when it verified (or when none
    /// was presented and none was required).
    pub verify: u32,
    /// The TLS version.
    pub version: Option<String>,
    /// The client certificate's subject CN.
    pub cn: Option<String>,
    /// The cipher.
    pub cipher: Option<String>,
    /// The client certificate's signature algorithm.
    pub sig_alg: Option<String>,
    /// The client certificate's key algorithm.
    pub key_alg: Option<String>,
}

impl HAProxySsl {
    /// Reads an SSL TLV's value; `None` if it breaks the format.
    pub fn parse(value: &[u8]) -> Option<HAProxySsl> {
        let (&client, rest) = value.split_first()?;
        let verify = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?);
        let mut ssl = HAProxySsl {
            client,
            verify,
            version: None,
            cn: None,
            cipher: None,
            sig_alg: None,
            key_alg: None,
        };
        for (kind, v) in entries(&rest[4..])? {
            let slot = match kind {
                kind::SSL_VERSION => &mut ssl.version,
                kind::SSL_CN => &mut ssl.cn,
                kind::SSL_CIPHER => &mut ssl.cipher,
                kind::SSL_SIG_ALG => &mut ssl.sig_alg,
                kind::SSL_KEY_ALG => &mut ssl.key_alg,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(String::from_utf8_lossy(v).into_owned());
            }
        }
        Some(ssl)
    }

    /// True if the client connected over TLS.
    pub fn is_tls(&self) -> bool {
        self.client & ssl_client::SSL != 0
    }

    /// True if the client presented a certificate on this connection and the proxy verified it.
    pub fn has_verified_certificate(&self) -> bool {
        self.client & ssl_client::CERT_CONN != 0 && self.verify == 0
    }
}

/// The TLVs in `bytes`; `None` if one is cut short.
fn entries(mut bytes: &[u8]) -> Option<Vec<(u8, &[u8])>> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let len = usize::from(u16::from_be_bytes([*bytes.get(1)?, *bytes.get(2)?]));
        let value = bytes.get(3..3 + len)?;
        out.push((bytes[0], value));
        bytes = &bytes[3 + len..];
    }
    Some(out)
}

impl HAProxyMessage {
    /// The value of the first TLV of type `kind`.
    pub fn tlv(&self, kind: u8) -> Option<&[u8]> {
        self.tlvs
            .iter()
            .find(|t| t.kind == kind)
            .map(|t| &t.value[..])
    }

    /// The first TLV of `kind` as UTF-8 text.
    fn text(&self, kind: u8) -> Option<&str> {
        std::str::from_utf8(self.tlv(kind)?).ok()
    }

    /// The application protocol the client negotiated with the proxy (ALPN).
    pub fn alpn(&self) -> Option<&str> {
        self.text(kind::ALPN)
    }

    /// The host name the client asked the proxy for (TLS SNI or HTTP Host).
    pub fn authority(&self) -> Option<&str> {
        self.text(kind::AUTHORITY)
    }

    /// The proxy's id of the connection (HAProxy's `unique-id-format`).
    pub fn unique_id(&self) -> Option<&[u8]> {
        self.tlv(kind::UNIQUE_ID)
    }

    /// The TLS the proxy terminated, if it says.
    pub fn ssl(&self) -> Option<HAProxySsl> {
        HAProxySsl::parse(self.tlv(kind::SSL)?)
    }

    /// The network namespace the connection came from.
    pub fn netns(&self) -> Option<&str> {
        self.text(kind::NETNS)
    }

    /// AWS: the id of the VPC endpoint the client came through (PrivateLink).
    pub fn aws_vpc_endpoint_id(&self) -> Option<&str> {
        match self.tlv(kind::AWS)? {
            [0x01, id @ ..] => std::str::from_utf8(id).ok(),
            _ => None,
        }
    }

    /// Azure: the link id of the private endpoint the client came through.
    pub fn azure_link_id(&self) -> Option<u32> {
        match self.tlv(kind::AZURE)? {
            [0x01, a, b, c, d] => Some(u32::from_le_bytes([*a, *b, *c, *d])),
            _ => None,
        }
    }

    /// Google Cloud: the Private Service Connect connection id.
    pub fn gcp_psc_connection_id(&self) -> Option<u64> {
        Some(u64::from_be_bytes(self.tlv(kind::GCP)?.try_into().ok()?))
    }
}

/// CRC32C (Castagnoli, reflected) of `parts` one after the other, as the CRC32C TLV
/// carries it.
pub(crate) fn crc32c(parts: &[&[u8]]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0x82F6_3B78
                } else {
                    c >> 1
                };
                k += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    let mut c = !0u32;
    for part in parts {
        for &b in *part {
            c = TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
        }
    }
    !c
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::haproxy::HAProxyTlv;

    fn with(tlvs: &[(u8, &[u8])]) -> HAProxyMessage {
        let mut m = HAProxyMessage::tcp(
            "192.0.2.1:40000".parse().unwrap(),
            "198.51.100.2:443".parse().unwrap(),
        );
        m.tlvs = tlvs
            .iter()
            .map(|(kind, v)| HAProxyTlv {
                kind: *kind,
                value: Bytes::copy_from_slice(v),
            })
            .collect();
        m
    }

    #[test]
    fn crc32c_matches_the_castagnoli_check_value() {
        // RFC 3720's and the common check value of "123456789".
        assert_eq!(crc32c(&[b"123456789"]), 0xE306_9283);
        assert_eq!(
            crc32c(&[b"1234", b"", b"56789"]),
            0xE306_9283,
            "parts in order"
        );
        assert_eq!(crc32c(&[]), 0);
    }

    #[test]
    fn text_tlvs_read_as_text_and_only_the_first_counts() {
        let m = with(&[
            (kind::ALPN, b"h2"),
            (kind::AUTHORITY, b"api.example.com"),
            (kind::AUTHORITY, b"ignored.example"),
            (kind::UNIQUE_ID, &[1, 2, 3]),
            (kind::NETNS, b"blue"),
        ]);
        assert_eq!(m.alpn(), Some("h2"));
        assert_eq!(m.authority(), Some("api.example.com"));
        assert_eq!(m.unique_id(), Some(&[1u8, 2, 3][..]));
        assert_eq!(m.netns(), Some("blue"));
        assert_eq!(with(&[(kind::AUTHORITY, &[0xff, 0xfe])]).authority(), None);
        assert_eq!(with(&[]).alpn(), None);
    }

    #[test]
    fn the_ssl_tlv_gives_its_flags_verify_result_and_sub_tlvs() {
        let mut v = vec![ssl_client::SSL | ssl_client::CERT_CONN, 0, 0, 0, 0];
        for (k, s) in [
            (kind::SSL_VERSION, "TLSv1.3"),
            (kind::SSL_CN, "alice"),
            (kind::SSL_CIPHER, "TLS_AES_256_GCM_SHA384"),
            (0x7f, "unknown sub-type, skipped"),
        ] {
            v.push(k);
            v.extend_from_slice(&(s.len() as u16).to_be_bytes());
            v.extend_from_slice(s.as_bytes());
        }
        let ssl = with(&[(kind::SSL, &v)]).ssl().unwrap();
        assert!(ssl.is_tls());
        assert!(ssl.has_verified_certificate());
        assert_eq!(ssl.version.as_deref(), Some("TLSv1.3"));
        assert_eq!(ssl.cn.as_deref(), Some("alice"));
        assert_eq!(ssl.cipher.as_deref(), Some("TLS_AES_256_GCM_SHA384"));
        assert_eq!(ssl.sig_alg, None);
        // A failed verification, then broken values.
        let mut failed = v.clone();
        failed[4] = 1;
        assert!(!with(&[(kind::SSL, &failed)])
            .ssl()
            .unwrap()
            .has_verified_certificate());
        assert_eq!(with(&[(kind::SSL, &v[..3])]).ssl(), None, "no verify field");
        assert_eq!(
            with(&[(kind::SSL, &v[..v.len() - 1])]).ssl(),
            None,
            "a sub-TLV cut short"
        );
    }

    #[test]
    fn cloud_tlvs_need_their_subtype_and_size() {
        let m = with(&[
            (kind::AWS, b"\x01vpce-08d2bf15fac5001c9"),
            (kind::AZURE, &[0x01, 0x78, 0x56, 0x34, 0x12]),
            (kind::GCP, &0x0102_0304_0506_0708u64.to_be_bytes()),
        ]);
        assert_eq!(m.aws_vpc_endpoint_id(), Some("vpce-08d2bf15fac5001c9"));
        assert_eq!(m.azure_link_id(), Some(0x1234_5678));
        assert_eq!(m.gcp_psc_connection_id(), Some(0x0102_0304_0506_0708));
        let bad = with(&[
            (kind::AWS, b"\x02other"),
            (kind::AZURE, &[0x01, 1, 2]),
            (kind::GCP, &[1, 2, 3]),
        ]);
        assert_eq!(bad.aws_vpc_endpoint_id(), None);
        assert_eq!(bad.azure_link_id(), None);
        assert_eq!(bad.gcp_psc_connection_id(), None);
    }
}
