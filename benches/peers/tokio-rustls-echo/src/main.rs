//! TLS echo server on tokio's current_thread runtime and tokio-rustls (rustls with ring, as
//! netloop-tls): one thread accepts and echoes, one task per connection, which reads what
//! plaintext there is, writes it back and flushes.
//!
//! `tokio-rustls-echo CERT.pem KEY.pem [PORT] [HOST]` (PORT 0 or absent: the kernel picks;
//! HOST default 127.0.0.1). Prints `listening PORT` on stdout once it accepts.
//!
//! The server configuration matches netloop's `SslContext::server` defaults: TLS 1.2 and 1.3,
//! stateless session tickets (ring's ticketer) and a session cache of 1024 entries, the server's
//! cipher order with the same suites first (TLS_AES_128_GCM_SHA256, as netloop-tls prefers).

use std::io;
use std::sync::Arc;

use rustls::crypto::ring;
use rustls::server::ServerSessionMemoryCache;
use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

fn config(cert: &str, key: &str) -> Result<ServerConfig, Box<dyn std::error::Error>> {
    let chain = CertificateDer::pem_file_iter(cert)?.collect::<Result<Vec<_>, _>>()?;
    let key = PrivateKeyDer::from_pem_file(key)?;
    let mut provider = ring::default_provider();
    // netloop-tls's order (crates/tls/src/context.rs): AES-128-GCM, ChaCha20, then AES-256-GCM.
    provider.cipher_suites.sort_by_key(|s| {
        let name = format!("{:?}", s.suite());
        if name.contains("AES_128") {
            0
        } else if name.contains("CHACHA20") {
            1
        } else {
            2
        }
    });
    let mut c = ServerConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    c.session_storage = ServerSessionMemoryCache::new(1024);
    c.ticketer = ring::Ticketer::new()?;
    c.ignore_client_order = true;
    Ok(c)
}

async fn serve(acceptor: TlsAcceptor, stream: TcpStream) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut tls = acceptor.accept(stream).await?;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = tls.read(&mut buf).await?;
        if n == 0 {
            return tls.shutdown().await;
        }
        tls.write_all(&buf[..n]).await?;
        tls.flush().await?;
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: tokio-rustls-echo CERT.pem KEY.pem [PORT] [HOST]";
    let cert = args.next().ok_or(usage)?;
    let key = args.next().ok_or(usage)?;
    let port: u16 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(0);
    let host = args.next().unwrap_or_else(|| "127.0.0.1".into());
    let acceptor = TlsAcceptor::from(Arc::new(config(&cert, &key)?));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    rt.block_on(async move {
        let listener = TcpListener::bind((host.as_str(), port)).await?;
        println!("listening {}", listener.local_addr()?.port());
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move {
                        let _ = serve(acceptor, stream).await;
                    });
                }
                // Out of fds and the like: keep serving the connections there are.
                Err(e) => eprintln!("tokio-rustls-echo: accept: {e}"),
            }
        }
    })
}
