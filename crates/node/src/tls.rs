//! `NativeSslContext`: a TLS context made once from node:tls-style options (already checked and
//! normalised in src/tls.ts) and shared by every channel and worker thread that uses it.
//!
//! Ground rules: contexts are `Send + Sync` (an `Arc` of rustls configurations). The
//! process-wide registry (crate::registry, `tls_contexts`) maps a context's id to it, so a worker thread can find a context
//! made on another thread (worker data carries the id, not the object). The JS object that
//! made a context owns its entry (removed when that object is collected); channels hold their
//! own reference, so a connection outlives its context's entry.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use netloop_tls::{ClientAuth, PemIdentity, SslContext, SslOptions, TlsError, TlsVersion};

use crate::error::{throw, Code, JsResult};
use netloop_wire::registry::{lock, registry};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

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

/// What an identity is made of, as src/tls-options.ts hands it over.
struct IdentityParts<'a> {
    cert: &'a Option<Buffer>,
    key: &'a Option<Buffer>,
    pfx: Option<&'a [u8]>,
    /// The `pfx`'s passphrase (its own, else the context's).
    passphrase: Option<&'a str>,
    /// A passphrase given for this identity alone (an SNI entry's).
    own_passphrase: Option<&'a str>,
    ocsp: &'a Option<Buffer>,
    what: &'a str,
}

fn identity(p: IdentityParts<'_>) -> JsResult<Option<PemIdentity>> {
    let ocsp = p.ocsp.as_ref().map(|b| b.to_vec());
    match (p.cert, p.key, p.pfx) {
        (None, None, Some(pfx)) => {
            PemIdentity::from_pfx(pfx, p.passphrase.map(str::as_bytes), ocsp, p.what)
                .map(Some)
                .map_err(tls_error)
        }
        // A passphrase of the identity's own (an SNI entry's) opens its key now; the
        // context's opens the others when the context is built.
        (Some(c), Some(k), None) => match p.own_passphrase {
            Some(pass) => {
                PemIdentity::with_passphrase(c.to_vec(), k, pass.as_bytes(), ocsp, p.what)
                    .map(Some)
                    .map_err(tls_error)
            }
            None => Ok(Some(PemIdentity {
                chain: c.to_vec(),
                key: k.to_vec(),
                ocsp,
            })),
        },
        (None, None, None) => Ok(None),
        (_, _, Some(_)) => Err(tls_error(TlsError::Config(format!(
            "{}: give either pfx or cert and key",
            p.what
        )))),
        _ => Err(tls_error(TlsError::Config(
            "cert and key must be given together".into(),
        ))),
    }
}

/// The default identity (which staples `ocsp`, as node:tls staples for its first
/// certificate) and the others of a `key` or `pfx` array.
fn first_and_rest(
    ids: Vec<PemIdentity>,
    ocsp: &Option<Buffer>,
) -> (Option<PemIdentity>, Vec<PemIdentity>) {
    let mut ids = ids.into_iter();
    let mut first = ids.next();
    if let Some(f) = first.as_mut() {
        f.ocsp = ocsp.as_ref().map(|b| b.to_vec());
    }
    (first, ids.collect())
}

/// A context of the side `o` names.
fn build(o: &NativeSslOptions) -> JsResult<SslContext> {
    let opts = options(o)?;
    if o.is_server {
        SslContext::server(&opts)
    } else {
        SslContext::client(&opts)
    }
    .map_err(tls_error)
}

fn options(o: &NativeSslOptions) -> JsResult<SslOptions> {
    let version = |v: &Option<String>, d: TlsVersion| match v {
        Some(name) => TlsVersion::parse(name).map_err(tls_error),
        None => Ok(d),
    };
    let reject = o.reject_unauthorized.unwrap_or(true);
    let client_auth = match (o.request_cert.unwrap_or(false), reject) {
        (false, _) => ClientAuth::None,
        (true, true) => ClientAuth::Require,
        (true, false) => ClientAuth::Request,
    };
    let mut sni = Vec::new();
    for e in o.sni.iter().flatten() {
        let what = format!("SNI['{}']", e.hostname);
        let id = identity(IdentityParts {
            cert: &e.cert,
            key: &e.key,
            pfx: e.pfx.as_deref(),
            passphrase: e.passphrase.as_deref().or(o.passphrase.as_deref()),
            own_passphrase: e.passphrase.as_deref(),
            ocsp: &e.ocsp_response,
            what: &what,
        })?
        .ok_or_else(|| {
            tls_error(TlsError::Config(format!(
                "{what}: give cert and key, or pfx"
            )))
        })?;
        sni.push((e.hostname.clone(), id));
    }
    let defaults = SslOptions::default();
    let (identity, extra_identities) = match (&o.keys, o.pfxs.as_deref()) {
        (Some(keys), None) => {
            let chains: Vec<Vec<u8>> = o.certs.iter().flatten().map(|c| c.to_vec()).collect();
            let keys: Vec<(Vec<u8>, Option<Vec<u8>>)> = keys
                .iter()
                .map(|k| {
                    let pass = k.passphrase.as_deref().or(o.passphrase.as_deref());
                    (k.pem.to_vec(), pass.map(|p| p.as_bytes().to_vec()))
                })
                .collect();
            let ids = PemIdentity::pair(&chains, &keys).map_err(tls_error)?;
            first_and_rest(ids, &o.ocsp_response)
        }
        (None, Some([one])) => (
            identity(IdentityParts {
                cert: &o.cert,
                key: &o.key,
                pfx: Some(&one.buf),
                passphrase: one.passphrase.as_deref().or(o.passphrase.as_deref()),
                own_passphrase: None,
                ocsp: &o.ocsp_response,
                what: "pfx",
            })?,
            Vec::new(),
        ),
        (None, Some(several)) if o.cert.is_none() && o.key.is_none() => {
            let ids = several
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let pass = p.passphrase.as_deref().or(o.passphrase.as_deref());
                    PemIdentity::from_pfx(
                        &p.buf,
                        pass.map(str::as_bytes),
                        None,
                        &format!("pfx[{i}]"),
                    )
                })
                .collect::<std::result::Result<Vec<PemIdentity>, TlsError>>()
                .map_err(tls_error)?;
            first_and_rest(ids, &o.ocsp_response)
        }
        (Some(_), Some(_)) | (None, Some(_)) => {
            return Err(tls_error(TlsError::Config(
                "pfx: give either pfx or cert and key".into(),
            )))
        }
        (None, None) => (
            identity(IdentityParts {
                cert: &o.cert,
                key: &o.key,
                pfx: None,
                passphrase: o.passphrase.as_deref(),
                own_passphrase: None,
                ocsp: &o.ocsp_response,
                what: "pfx",
            })?,
            Vec::new(),
        ),
    };
    Ok(SslOptions {
        identity,
        extra_identities,
        sni,
        ca: o.ca.as_ref().map(|b| b.to_vec()),
        system_roots: o.system_roots.unwrap_or(false),
        client_auth,
        reject_unauthorized: reject,
        alpn: o
            .alpn_protocols
            .iter()
            .flatten()
            .map(|p| p.as_bytes().to_vec())
            .collect(),
        min_version: version(&o.min_version, TlsVersion::Tls12)?,
        max_version: version(&o.max_version, TlsVersion::Tls13)?,
        server_name: o.servername.clone(),
        session_cache_size: o
            .session_cache_size
            .map_or(defaults.session_cache_size, |n| n as usize),
        session_tickets: o.session_tickets.unwrap_or(true),
        session_timeout: o
            .session_timeout
            .map_or(defaults.session_timeout, |s| Duration::from_secs(s.into())),
        handshake_timeout: o
            .handshake_timeout
            .map_or(defaults.handshake_timeout, |ms| {
                Duration::from_secs_f64(ms.max(0.0) / 1000.0)
            }),
        ask_server_name: o.sni_callback.unwrap_or(false),
        ask_protocol: o.alpn_callback.unwrap_or(false),
        // TLS 1.3 server records stay on rustls unless the context asks for the experimental
        // own record layer, or NETLOOP_TLS_OWN_RECORDS=1 does for every context (decision
        // 0007; for A/B measurements).
        experimental_own_records: o.experimental_own_records.unwrap_or(false)
            || std::env::var("NETLOOP_TLS_OWN_RECORDS").is_ok_and(|v| v == "1"),
        cipher_suites: o.ciphers.clone().unwrap_or_default(),
        sigalgs: o.sigalgs.clone().unwrap_or_default(),
        honor_cipher_order: o.honor_cipher_order.unwrap_or(true),
        groups: o.groups.clone().unwrap_or_default(),
        crl: o.crl.as_ref().map(|b| b.to_vec()),
        key_log_file: o.key_log_file.as_ref().map(std::path::PathBuf::from),
        passphrase: o.passphrase.as_ref().map(|p| p.as_bytes().to_vec()),
        check_server_identity: o.check_server_identity.unwrap_or(false),
        ticket_keys: o.ticket_keys.as_ref().map(|b| b.to_vec()),
    })
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
        let ctx = build(&o).map_err(|e| throw(&env, e))?;
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        lock(&registry().tls_contexts).insert(id, ctx);
        Ok(NativeSslContext {
            id,
            owner: true,
            server: o.is_server,
        })
    }

    /// A context made elsewhere in the process (e.g. on the main thread, for a worker).
    #[napi(factory)]
    pub fn from_id(env: Env, id: f64) -> Result<Self> {
        let ctx = netloop_wire::registry::tls_context(id as u64).ok_or_else(|| {
            let e = napi::Error::new(
                Code("ERR_TLS_INVALID_CONTEXT"),
                format!("no TLS context with id {id} (the object that made it was collected)"),
            );
            throw(&env, e)
        })?;
        if ctx.asks_server_name() || ctx.asks_protocol() {
            // The callback is a JS function of the thread that made the context.
            let (code, which) = if ctx.asks_server_name() {
                ("ERR_TLS_SNI_CALLBACK_NOT_SHAREABLE", "an SNICallback")
            } else {
                ("ERR_TLS_ALPN_CALLBACK_NOT_SHAREABLE", "an ALPNCallback")
            };
            let e = napi::Error::new(
                Code(code),
                format!(
                    "an SslContext with {which} cannot be used on another thread: its callback \
                     is a function of the thread that made it (make the context in the worker's \
                     module instead)"
                ),
            );
            return Err(throw(&env, e));
        }
        if ctx.checks_server_identity() {
            let e = napi::Error::new(
                Code("ERR_TLS_CHECK_SERVER_IDENTITY_NOT_SHAREABLE"),
                "an SslContext with a checkServerIdentity cannot be used on another thread: the \
                 function belongs to the thread that made it (make the context in the worker's \
                 module instead)"
                    .to_string(),
            );
            return Err(throw(&env, e));
        }
        Ok(NativeSslContext {
            id: id as u64,
            owner: false,
            server: ctx.is_server(),
        })
    }

    /// Replaces the configuration under this id (node:tls's `server.setSecureContext`):
    /// handlers made from now on, on every thread, use the new one; established connections
    /// keep theirs. The side (server or client) and whether the context asks JS for its
    /// context by server name stay as they were. On an error nothing changes.
    #[napi]
    pub fn reload(&self, env: Env, o: NativeSslOptions) -> Result<()> {
        let fail = |code: &'static str, m: String| throw(&env, napi::Error::new(Code(code), m));
        if o.is_server != self.server {
            let side = |s: bool| if s { "a server" } else { "a client" };
            return Err(fail(
                "ERR_INVALID_ARG_VALUE",
                format!(
                    "{} context cannot be reloaded as {} context",
                    side(self.server),
                    side(o.is_server)
                ),
            ));
        }
        let ctx = build(&o).map_err(|e| throw(&env, e))?;
        let mut contexts = lock(&registry().tls_contexts);
        let Some(slot) = contexts.get_mut(&self.id) else {
            return Err(fail(
                "ERR_TLS_INVALID_CONTEXT",
                format!(
                    "no TLS context with id {} (the object that made it was collected)",
                    self.id
                ),
            ));
        };
        // A context without a JS function may be in use on other threads, which have none to
        // ask: a reload keeps which functions the context has.
        type Has = fn(&SslContext) -> bool;
        let functions: [(&str, Has); 3] = [
            ("a checkServerIdentity", SslContext::checks_server_identity),
            ("an SNICallback", SslContext::asks_server_name),
            ("an ALPNCallback", SslContext::asks_protocol),
        ];
        for (which, has) in functions {
            if has(slot) != has(&ctx) {
                return Err(fail(
                    "ERR_INVALID_ARG_VALUE",
                    format!(
                        "a reload keeps whether the context has {which} (a context without one \
                         may be in use on other threads, which have no function to ask)"
                    ),
                ));
            }
        }
        *slot = ctx;
        Ok(())
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
            lock(&registry().tls_contexts).remove(&self.id);
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
