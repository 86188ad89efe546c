//! Server certificate selection by the client's SNI host name: exact names, then wildcards
//! (`*.example.com` matches one label), then the default certificate.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// Certificates by host name with a default (Netty's `SniHandler` mapping, node:tls's `SNI`
/// host map). Shared by every connection of a context.
#[derive(Default)]
pub struct SniResolver {
    default: Option<Arc<CertifiedKey>>,
    exact: HashMap<String, Arc<CertifiedKey>>,
    wildcard: HashMap<String, Arc<CertifiedKey>>,
}

impl SniResolver {
    /// A resolver with `default` for clients that send no (or an unknown) name.
    pub fn new(default: Option<Arc<CertifiedKey>>) -> Self {
        SniResolver {
            default,
            ..Default::default()
        }
    }

    /// Serves `key` to clients asking for `host` (`*.example.com` for one-label wildcards).
    pub fn add(&mut self, host: &str, key: Arc<CertifiedKey>) {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match host.strip_prefix("*.") {
            Some(suffix) => self.wildcard.insert(suffix.to_string(), key),
            None => self.exact.insert(host, key),
        };
    }

    /// The certificate for `name` (none: the default).
    pub fn lookup(&self, name: Option<&str>) -> Option<Arc<CertifiedKey>> {
        if let Some(name) = name {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            if let Some(k) = self.exact.get(&name) {
                return Some(k.clone());
            }
            if let Some((_, parent)) = name.split_once('.') {
                if let Some(k) = self.wildcard.get(parent) {
                    return Some(k.clone());
                }
            }
        }
        self.default.clone()
    }

    /// True if no certificate at all is configured.
    pub fn is_empty(&self) -> bool {
        self.default.is_none() && self.exact.is_empty() && self.wildcard.is_empty()
    }
}

impl ResolvesServerCert for SniResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.lookup(hello.server_name())
    }
}

impl fmt::Debug for SniResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SniResolver")
            .field("default", &self.default.is_some())
            .field("exact", &self.exact.keys().collect::<Vec<_>>())
            .field("wildcard", &self.wildcard.keys().collect::<Vec<_>>())
            .finish()
    }
}
