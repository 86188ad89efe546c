//! `channel.tls`: what the `SslHandler` in a channel's pipeline negotiated, as a JS object;
//! its keying material; and JS's answers to the handler's questions (asked and answered in
//! `netloop_wire::tls_info`).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use netloop_tls::SslHandler;

use super::NativeChannels;
use crate::error::{throw, Code};

/// A completed handshake's parameters (src/tls.ts turns it into `TlsInfo`).
#[napi(object)]
pub struct TlsSessionInfo {
    pub protocol: String,
    /// The suite's IANA name (`getCipher().standardName`).
    pub cipher: String,
    /// The suite's OpenSSL name (`getCipher().name`).
    pub cipher_name: String,
    pub alpn_protocol: Option<String>,
    pub servername: Option<String>,
    pub authorized: bool,
    pub authorization_error_code: Option<String>,
    pub authorization_error: Option<String>,
    pub resumed: bool,
    /// The peer's chain, DER, leaf first.
    pub peer_certificates: Vec<Buffer>,
    /// Client: the OCSP response the server stapled (DER).
    pub ocsp_response: Option<Buffer>,
    /// The key exchange group (OpenSSL's name) and its size in bits.
    pub key_exchange_name: Option<String>,
    pub key_exchange_bits: Option<u32>,
}

#[napi]
impl NativeChannels {
    /// The answer about channel `id`'s ClientHello (`Hub::tls_answer_client_hello`). False
    /// when the handler no longer waits (closed, timed out, answered).
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn tls_answer_client_hello(
        &self,
        id: f64,
        kind: u32,
        context: f64,
        message: String,
        protocol_kind: u32,
        protocol: String,
        protocol_message: String,
    ) -> bool {
        self.enter();
        let answered = self.hub.tls_answer_client_hello(
            id,
            kind,
            context,
            message,
            protocol_kind,
            protocol,
            protocol_message,
        );
        // What the handler did (records sent, a failure's events) is delivered by the next
        // iteration, also when JS answered outside one (after a timer or a promise).
        self.rearm();
        answered
    }

    /// The `checkServerIdentity` verdict for channel `id`: accepted, or refused with the
    /// error's message. False when the handler no longer waits (closed, timed out, answered).
    #[napi]
    pub fn tls_answer_server_identity(&self, id: f64, accepted: bool, message: String) -> bool {
        self.enter();
        let answered = self.hub.tls_answer_server_identity(id, accepted, message);
        self.rearm();
        answered
    }

    /// `length` bytes of keying material from the session of the channel's `SslHandler`,
    /// exported under `label` and `context` (node:tls's `exportKeyingMaterial`; the arguments
    /// checked in src/tls-info.ts).
    #[napi]
    pub fn tls_export_keying_material(
        &self,
        env: Env,
        id: f64,
        length: u32,
        label: String,
        context: Option<Buffer>,
    ) -> Result<Buffer> {
        self.enter();
        self.with_channel(id, |ch| {
            let exported = ch.pipeline().find_handler(|h: &SslHandler| {
                Some(h.export_keying_material(
                    length as usize,
                    label.as_bytes(),
                    context.as_deref(),
                ))
            });
            match exported {
                Some(Ok(bytes)) => Ok(Buffer::from(bytes)),
                Some(Err(e)) => Err(napi::Error::new(Code(e.code()), e.to_string())),
                None => Err(napi::Error::new(
                    Code("ERR_TLS_INVALID_STATE"),
                    "exportKeyingMaterial: the channel has no SslHandler".to_string(),
                )),
            }
        })
        .map_err(|e| throw(&env, e))
    }

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
                    cipher_name: s.cipher_openssl_name().to_string(),
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
                    ocsp_response: s.ocsp_response.as_ref().map(|r| Buffer::from(r.to_vec())),
                    key_exchange_name: s.key_exchange.map(|(name, _)| name.to_string()),
                    key_exchange_bits: s.key_exchange.map(|(_, bits)| bits),
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
