//! Echo server on tokio's current_thread runtime: one thread accepts and echoes (or, with
//! THREADS > 0, on the multi_thread runtime with that many workers: the peer of netloop's
//! worker loops in the scaling workload).
//!
//! `tokio-echo [PORT] [HOST] [THREADS]` (PORT 0 or absent: the kernel picks; HOST default
//! 127.0.0.1; THREADS default 0: current_thread).
//! Prints `listening PORT` on stdout once it accepts.
//!
//! One task per connection. A task waits for readiness, reads into one buffer shared by the
//! thread and writes it straight back; only what the socket does not take is copied into a
//! buffer of the connection (then written with `write_all`, the connection not read meanwhile).
//! So an idle connection costs its task and its registration, not a read buffer: the same
//! shape as the C epoll server.

use std::cell::RefCell;
use std::io::{self, ErrorKind};

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

thread_local! {
    static BUF: RefCell<Vec<u8>> = RefCell::new(vec![0; 64 * 1024]);
}

/// Reads once and echoes what the socket takes now; returns what is left to write.
/// `Ok(None)` with `closed` set: the peer closed.
fn read_and_echo(stream: &TcpStream, closed: &mut bool) -> io::Result<Option<Vec<u8>>> {
    BUF.with(|buf| {
        let mut buf = buf.borrow_mut();
        let n = match stream.try_read(&mut buf) {
            Ok(0) => {
                *closed = true;
                return Ok(None);
            }
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut off = 0;
        while off < n {
            match stream.try_write(&buf[off..n]) {
                Ok(w) => off += w,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(Some(buf[off..n].to_vec())),
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    })
}

async fn serve(mut stream: TcpStream) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut closed = false;
    loop {
        stream.readable().await?;
        let rest = read_and_echo(&stream, &mut closed)?;
        if closed {
            return Ok(());
        }
        if let Some(rest) = rest {
            stream.write_all(&rest).await?;
        }
    }
}

fn main() -> io::Result<()> {
    let mut args = std::env::args().skip(1);
    let port: u16 = args.next().map(|s| s.parse().expect("PORT")).unwrap_or(0);
    let host = args.next().unwrap_or_else(|| "127.0.0.1".into());
    let threads: usize = args.next().map(|s| s.parse().expect("THREADS")).unwrap_or(0);
    let rt = if threads == 0 {
        tokio::runtime::Builder::new_current_thread().enable_io().build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_io()
            .build()?
    };
    rt.block_on(async move {
        let listener = TcpListener::bind((host.as_str(), port)).await?;
        println!("listening {}", listener.local_addr()?.port());
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(async move {
                        let _ = serve(stream).await;
                    });
                }
                // Out of fds and the like: keep serving the connections there are.
                Err(e) => eprintln!("tokio-echo: accept: {e}"),
            }
        }
    })
}
