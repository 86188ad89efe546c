//! `NativeSslContext`: a TLS context made once from node:tls-style options (already checked and
//! normalised in src/tls.ts) and shared by every channel and worker thread that uses it. The
//! options are converted here into netloop-tls's plain `NodeTlsOptions`, which reads them by
//! node:tls's rules (identities, passphrases, client authentication, defaults).
//!
//! Ground rules: contexts are `Send + Sync` (an `Arc` of rustls configurations). The
//! process-wide table (netloop-wire's `tls_contexts`) maps a context's id to it, so a worker
//! thread can find a context made on another thread (worker data carries the id, not the
//! object). The JS object that made a context owns its entry (removed when that object is
//! collected); channels hold their own reference, so a connection outlives its context's
//! entry.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use netloop_tls::{NodeKey, NodeSniIdentity, NodeTlsOptions, SslContext, TlsError};

use crate::error::{throw, wire_error, Code, JsResult};
use netloop_wire::tls_contexts;

/// A certificate chain and key for one SNI host name: PEM `cert` and `key`, or a PKCS#12 `pfx`.
#[napi(object)]
pub struct SniIdentity {
    pub hostname: String,
    pub cert: Option<Buffer>,
    pub key: Option<Buffer>,
    pub pfx: Option<Buffer>,
    /// The entry's own passphrase, for its `pfx` or its encrypted `key` (else the context's).
    pub passphrase: Option<String>,
    pub ocsp_response: Option<Buffer>,
}

/// One of node:tls's `key` array: a PEM key and its own passphrase.
#[napi(object)]
pub struct NativeKey {
    pub pem: Buffer,
    pub passphrase: Option<String>,
}

/// A PKCS#12 file of node:tls's `pfx` (one, or an array of them) with its own passphrase.
#[napi(object)]
pub struct NativePfx {
    pub buf: Buffer,
    pub passphrase: Option<String>,
}

/// The options src/tls.ts hands over (node:tls names, normalised to Buffers).
#[napi(object)]
pub struct NativeSslOptions {
    pub is_server: bool,
    pub cert: Option<Buffer>,
    pub key: Option<Buffer>,
    /// node:tls's `key` array (then `certs` holds the `cert` array: one chain per key).
    pub keys: Option<Vec<NativeKey>>,
    pub certs: Option<Vec<Buffer>>,
    pub ca: Option<Buffer>,
    pub system_roots: Option<bool>,
    pub sni: Option<Vec<SniIdentity>>,
    pub request_cert: Option<bool>,
    pub reject_unauthorized: Option<bool>,
    pub alpn_protocols: Option<Vec<String>>,
    pub min_version: Option<String>,
    pub max_version: Option<String>,
    pub servername: Option<String>,
    pub session_cache_size: Option<u32>,
    pub session_tickets: Option<bool>,
    /// Server: seconds a session resumes (node:tls's `sessionTimeout`).
    pub session_timeout: Option<u32>,
    pub handshake_timeout: Option<f64>,
    /// Server: TLS 1.3 records through netloop's own record layer (`experimentalOwnRecords`).
    pub experimental_own_records: Option<bool>,
    /// Server: the JS object has an `SNICallback` (its handlers ask JS for the context).
    pub sni_callback: Option<bool>,
    /// Server: the JS object has an `ALPNCallback` (its handlers ask JS for the protocol).
    pub alpn_callback: Option<bool>,
    /// Cipher suite names (`ciphers`, split at `:`).
    pub ciphers: Option<Vec<String>>,
    /// Signature scheme names (`sigalgs`, split at `:`).
    pub sigalgs: Option<Vec<String>>,
    pub honor_cipher_order: Option<bool>,
    /// Key-exchange group names (`ecdhCurve`, split at `:`).
    pub groups: Option<Vec<String>>,
    pub crl: Option<Buffer>,
    pub key_log_file: Option<String>,
    pub passphrase: Option<String>,
    /// Client: the JS object has a `checkServerIdentity` (its handlers ask JS to judge).
    pub check_server_identity: Option<bool>,
    /// Server: node:tls's `ticketKeys` (48 bytes).
    pub ticket_keys: Option<Buffer>,
    /// Server: a DER OCSP response stapled with `cert`.
    pub ocsp_response: Option<Buffer>,
    /// PKCS#12 files in place of `cert` and `key` (node:tls's `pfx`; several: a server's,
    /// one per key type, as a `key` array).
    pub pfxs: Option<Vec<NativePfx>>,
}

fn tls_error(e: TlsError) -> napi::Error<Code> {
    napi::Error::new(Code(e.code()), e.to_string())
}

/// A context of the side `o` names (node:tls's rules are netloop-tls's `NodeTlsOptions`).
fn build(o: NativeSslOptions) -> JsResult<SslContext> {
    NodeTlsOptions::from(o).build().map_err(tls_error)
}

fn bytes(b: Option<Buffer>) -> Option<Vec<u8>> {
    b.map(|b| b.to_vec())
}

fn key(bytes: Buffer, passphrase: Option<String>) -> NodeKey {
    NodeKey {
        bytes: bytes.to_vec(),
        passphrase,
    }
}

impl From<NativeSslOptions> for NodeTlsOptions {
    fn from(o: NativeSslOptions) -> Self {
        NodeTlsOptions {
            is_server: o.is_server,
            cert: bytes(o.cert),
            key: bytes(o.key),
            keys: o
                .keys
                .map(|v| v.into_iter().map(|k| key(k.pem, k.passphrase)).collect()),
            certs: o.certs.map(|c| c.iter().map(|b| b.to_vec()).collect()),
            ca: bytes(o.ca),
            system_roots: o.system_roots,
            sni: o.sni.map(|sni| {
                sni.into_iter()
                    .map(|e| NodeSniIdentity {
                        hostname: e.hostname,
                        cert: bytes(e.cert),
                        key: bytes(e.key),
                        pfx: bytes(e.pfx),
                        passphrase: e.passphrase,
                        ocsp_response: bytes(e.ocsp_response),
                    })
                    .collect()
            }),
            request_cert: o.request_cert,
            reject_unauthorized: o.reject_unauthorized,
            alpn_protocols: o.alpn_protocols,
            min_version: o.min_version,
            max_version: o.max_version,
            servername: o.servername,
            session_cache_size: o.session_cache_size,
            session_tickets: o.session_tickets,
            session_timeout: o.session_timeout,
            handshake_timeout: o.handshake_timeout,
            experimental_own_records: o.experimental_own_records,
            sni_callback: o.sni_callback,
            alpn_callback: o.alpn_callback,
            ciphers: o.ciphers,
            sigalgs: o.sigalgs,
            honor_cipher_order: o.honor_cipher_order,
            groups: o.groups,
            crl: bytes(o.crl),
            key_log_file: o.key_log_file,
            passphrase: o.passphrase,
            check_server_identity: o.check_server_identity,
            ticket_keys: bytes(o.ticket_keys),
            ocsp_response: bytes(o.ocsp_response),
            pfxs: o
                .pfxs
                .map(|v| v.into_iter().map(|p| key(p.buf, p.passphrase)).collect()),
        }
    }
}

/// A TLS context for JS (src/tls.ts `SslContext`), shared across threads by id.
#[napi]
#[derive(Debug)]
pub struct NativeSslContext {
    id: u64,
    owner: bool,
    server: bool,
}

#[napi]
impl NativeSslContext {
    /// Parses the options once and registers the context for every thread of the process.
    #[napi(constructor)]
    pub fn new(env: Env, o: NativeSslOptions) -> Result<Self> {
        let server = o.is_server;
        let ctx = build(o).map_err(|e| throw(&env, e))?;
        Ok(NativeSslContext {
            id: tls_contexts::register(ctx),
            owner: true,
            server,
        })
    }

    /// A context made elsewhere in the process (e.g. on the main thread, for a worker).
    #[napi(factory)]
    pub fn from_id(env: Env, id: f64) -> Result<Self> {
        let ctx = tls_contexts::shared(id).map_err(|e| throw(&env, wire_error(e)))?;
        Ok(NativeSslContext {
            id: id as u64,
            owner: false,
            server: ctx.is_server(),
        })
    }

    /// Replaces the configuration under this id (node:tls's `server.setSecureContext`):
    /// handlers made from now on, on every thread, use the new one; established connections
    /// keep theirs. The side (server or client) and whether the context asks JS stay as they
    /// were (netloop-wire's `tls_contexts`). On an error nothing changes.
    #[napi]
    pub fn reload(&self, env: Env, o: NativeSslOptions) -> Result<()> {
        let fail = |e| throw(&env, wire_error(e));
        tls_contexts::check_reload_side(self.server, o.is_server).map_err(fail)?;
        let ctx = build(o).map_err(|e| throw(&env, e))?;
        tls_contexts::reload(self.id, ctx).map_err(fail)
    }

    /// The context's process-wide id (worker threads find it by this id).
    #[napi(getter)]
    pub fn id(&self) -> f64 {
        self.id as f64
    }

    /// True for a server context.
    #[napi(getter)]
    pub fn is_server(&self) -> bool {
        self.server
    }
}

impl Drop for NativeSslContext {
    fn drop(&mut self) {
        if self.owner {
            tls_contexts::unregister(self.id);
        }
    }
}

impl std::fmt::Debug for SniIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SniIdentity")
            .field("hostname", &self.hostname)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for NativeSslOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Keys and certificates are not printed.
        f.debug_struct("NativeSslOptions")
            .field("is_server", &self.is_server)
            .field("servername", &self.servername)
            .field("alpn_protocols", &self.alpn_protocols)
            .field("min_version", &self.min_version)
            .field("max_version", &self.max_version)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for NativeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Keys are not printed.
        f.debug_struct("NativeKey").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for NativePfx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Files hold keys and passphrases: neither is printed.
        f.debug_struct("NativePfx")
            .field("bytes", &self.buf.len())
            .finish_non_exhaustive()
    }
}
