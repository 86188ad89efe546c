//! Cipher suites and key-exchange groups chosen by name, in order of preference (node:tls's
//! `ciphers` and `ecdhCurve`, Netty's `SslContextBuilder.ciphers`).
//!
//! Names are the IANA ones (`TLS_AES_128_GCM_SHA256`, `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`)
//! or OpenSSL's (`ECDHE-RSA-AES128-GCM-SHA256`), compared without regard to case. OpenSSL's
//! cipher-string language (`HIGH:!aNULL`, `@STRENGTH`) is not: a name netloop does not know is
//! an error that lists the names it knows, never a suite silently dropped.

use rustls::crypto::ring::{cipher_suite as cs, kx_group};
use rustls::crypto::SupportedKxGroup;
use rustls::SupportedCipherSuite;

use crate::error::TlsError;

/// Every suite netloop offers, in its default order (AES-128-GCM first, as BoringSSL and Go:
/// as secure for TLS, cheaper per record), with its IANA and OpenSSL names.
fn suite_table() -> [(SupportedCipherSuite, &'static str, &'static str); 9] {
    [
        (
            cs::TLS13_AES_128_GCM_SHA256,
            "TLS_AES_128_GCM_SHA256",
            "TLS_AES_128_GCM_SHA256",
        ),
        (
            cs::TLS13_CHACHA20_POLY1305_SHA256,
            "TLS_CHACHA20_POLY1305_SHA256",
            "TLS_CHACHA20_POLY1305_SHA256",
        ),
        (
            cs::TLS13_AES_256_GCM_SHA384,
            "TLS_AES_256_GCM_SHA384",
            "TLS_AES_256_GCM_SHA384",
        ),
        (
            cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            "ECDHE-ECDSA-AES128-GCM-SHA256",
        ),
        (
            cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "ECDHE-RSA-AES128-GCM-SHA256",
        ),
        (
            cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            "ECDHE-ECDSA-CHACHA20-POLY1305",
        ),
        (
            cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
            "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
            "ECDHE-RSA-CHACHA20-POLY1305",
        ),
        (
            cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            "ECDHE-ECDSA-AES256-GCM-SHA384",
        ),
        (
            cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
            "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            "ECDHE-RSA-AES256-GCM-SHA384",
        ),
    ]
}

/// The OpenSSL name of the suite whose IANA name is `iana` (TLS 1.3 suites have the same
/// name in both); None for a suite netloop does not offer.
pub(crate) fn openssl_name(iana: &str) -> Option<&'static str> {
    suite_table()
        .into_iter()
        .find(|(_, name, _)| *name == iana)
        .map(|(_, _, openssl)| openssl)
}

/// The key-exchange groups netloop offers, in its default order, with the names node:tls's
/// `ecdhCurve` accepts for each (the first is the one reported).
fn group_table() -> [(&'static dyn SupportedKxGroup, &'static [&'static str]); 3] {
    [
        (kx_group::X25519, &["X25519"]),
        (kx_group::SECP256R1, &["P-256", "prime256v1", "secp256r1"]),
        (kx_group::SECP384R1, &["P-384", "secp384r1"]),
    ]
}

/// The default suites, in netloop's order.
pub(crate) fn default_suites() -> Vec<SupportedCipherSuite> {
    suite_table().iter().map(|s| s.0).collect()
}

/// The default key-exchange groups, in netloop's order.
pub(crate) fn default_groups() -> Vec<&'static dyn SupportedKxGroup> {
    group_table().iter().map(|g| g.0).collect()
}

/// The suites named in `names`, in that order (duplicates dropped).
pub(crate) fn cipher_suites(names: &[String]) -> Result<Vec<SupportedCipherSuite>, TlsError> {
    let table = suite_table();
    let mut out: Vec<SupportedCipherSuite> = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let found = table
            .iter()
            .find(|(_, iana, openssl)| {
                name.eq_ignore_ascii_case(iana) || name.eq_ignore_ascii_case(openssl)
            })
            .ok_or_else(|| {
                let known: Vec<&str> = table.iter().map(|s| s.2).collect();
                TlsError::Config(format!(
                    "ciphers: unknown or unsupported cipher suite {name:?} (netloop has: {})",
                    known.join(", ")
                ))
            })?;
        if !out.iter().any(|s| s.suite() == found.0.suite()) {
            out.push(found.0);
        }
    }
    if out.is_empty() {
        return Err(TlsError::Config("ciphers: no cipher suite named".into()));
    }
    Ok(out)
}

/// The groups named in `names`, in that order; `auto` alone: the default groups.
pub(crate) fn groups(names: &[String]) -> Result<Vec<&'static dyn SupportedKxGroup>, TlsError> {
    let names: Vec<&str> = names
        .iter()
        .map(|n| n.trim())
        .filter(|n| !n.is_empty())
        .collect();
    if names.len() == 1 && names[0].eq_ignore_ascii_case("auto") {
        return Ok(default_groups());
    }
    let table = group_table();
    let mut out: Vec<&'static dyn SupportedKxGroup> = Vec::new();
    for name in names {
        let (group, _) = table
            .iter()
            .find(|(_, aliases)| aliases.iter().any(|a| name.eq_ignore_ascii_case(a)))
            .ok_or_else(|| {
                let known: Vec<&str> = table.iter().map(|g| g.1[0]).collect();
                TlsError::Config(format!(
                    "ecdhCurve: unknown or unsupported group {name:?} (netloop has: {}, or auto)",
                    known.join(", ")
                ))
            })?;
        if !out.iter().any(|g| g.name() == group.name()) {
            out.push(*group);
        }
    }
    if out.is_empty() {
        return Err(TlsError::Config("ecdhCurve: no group named".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_openssl_name_of_each_suite_is_found_by_its_iana_name() {
        assert_eq!(
            openssl_name("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"),
            Some("ECDHE-ECDSA-AES128-GCM-SHA256")
        );
        assert_eq!(
            openssl_name("TLS_AES_256_GCM_SHA384"),
            Some("TLS_AES_256_GCM_SHA384")
        );
        assert_eq!(openssl_name("TLS_RSA_WITH_RC4_128_MD5"), None);
    }

    #[test]
    fn suites_are_found_by_iana_or_openssl_name_in_the_order_given() {
        let got = cipher_suites(&names(&[
            "ECDHE-RSA-AES256-GCM-SHA384",
            "tls_chacha20_poly1305_sha256",
            "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        ]))
        .unwrap();
        assert_eq!(
            got.iter().map(|s| s.suite()).collect::<Vec<_>>(),
            vec![
                cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384.suite(),
                cs::TLS13_CHACHA20_POLY1305_SHA256.suite(),
            ]
        );
    }

    #[test]
    fn an_unknown_suite_is_an_error_naming_it_and_the_known_ones() {
        let e = cipher_suites(&names(&["HIGH:!aNULL"])).unwrap_err();
        assert_eq!(e.code(), "ERR_TLS_INVALID_CONTEXT");
        let m = e.to_string();
        assert!(
            m.contains("\"HIGH:!aNULL\"") && m.contains("ECDHE-RSA-AES128-GCM-SHA256"),
            "{m}"
        );
        assert!(cipher_suites(&names(&[" ", ""])).is_err());
    }

    #[test]
    fn groups_take_node_names_and_auto() {
        let got = groups(&names(&["secp384r1", "X25519", "P-384"])).unwrap();
        assert_eq!(
            got.iter().map(|g| g.name()).collect::<Vec<_>>(),
            vec![kx_group::SECP384R1.name(), kx_group::X25519.name()]
        );
        assert_eq!(groups(&names(&["auto"])).unwrap().len(), 3);
        let e = groups(&names(&["brainpoolP256r1"])).unwrap_err();
        assert!(e.to_string().contains("P-256"), "{e}");
    }
}
