//! `channel.tls`: what the `SslHandler` in a channel's pipeline negotiated, as a JS object.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use netloop_tls::SslHandler;

use super::NativeChannels;
use crate::error::throw;

/// A completed handshake's parameters (src/tls.ts turns it into `TlsInfo`).
#[napi(object)]
pub struct TlsSessionInfo {
    pub protocol: String,
    pub cipher: String,
    pub alpn_protocol: Option<String>,
    pub servername: Option<String>,
    pub authorized: bool,
    pub authorization_error_code: Option<String>,
    pub authorization_error: Option<String>,
    pub resumed: bool,
    /// The peer's chain, DER, leaf first.
    pub peer_certificates: Vec<Buffer>,
}

#[napi]
impl NativeChannels {
    /// The session of the channel's `SslHandler` (none: no handler, or no handshake yet).
    #[napi]
    pub fn tls_session(&self, env: Env, id: f64) -> Result<Option<TlsSessionInfo>> {
        self.enter();
        self.with_channel(id, |ch| {
            Ok(ch
                .pipeline()
                .find_handler(|h: &SslHandler| h.session())
                .map(|s| TlsSessionInfo {
                    protocol: s.protocol.to_string(),
                    cipher: s.cipher.clone(),
                    alpn_protocol: s.alpn_protocol.clone(),
                    servername: s.server_name.clone(),
                    authorized: s.authorized,
                    authorization_error_code: s
                        .authorization_error
                        .as_ref()
                        .map(|e| e.code().to_string()),
                    authorization_error: s.authorization_error.as_ref().map(|e| e.to_string()),
                    resumed: s.resumed,
                    peer_certificates: s
                        .peer_certificates
                        .iter()
                        .map(|c| Buffer::from(c.to_vec()))
                        .collect(),
                }))
        })
        .map_err(|e| throw(&env, e))
    }
}

impl std::fmt::Debug for TlsSessionInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsSessionInfo")
            .field("protocol", &self.protocol)
            .field("cipher", &self.cipher)
            .field("alpn_protocol", &self.alpn_protocol)
            .field("servername", &self.servername)
            .field("authorized", &self.authorized)
            .field("resumed", &self.resumed)
            .finish_non_exhaustive()
    }
}
