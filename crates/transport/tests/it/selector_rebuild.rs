//! Issue 9: a channel whose socket cannot be moved to a rebuilt selector reports the error to
//! `exception_caught` and closes itself, instead of staying registered nowhere.

use crate::common;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::net::*;
use netloop_transport::eventloop::{LoopConfig, SelectorFault};
use netloop_transport::*;

#[test]
fn a_channel_that_cannot_be_re_registered_after_a_rebuild_reports_it_and_closes() {
    let fail_next_poll = Arc::new(AtomicBool::new(false));
    let f = fail_next_poll.clone();
    let net = Net::with_config(LoopConfig {
        fault_injector: Some(Arc::new(move || {
            if f.swap(false, Ordering::SeqCst) {
                SelectorFault::Error
            } else {
                SelectorFault::None
            }
        })),
        ..LoopConfig::default()
    });
    let (server, client) = net.client_of_sink_server();
    let errors = Rc::new(RefCell::new(Vec::new()));
    let e2 = errors.clone();
    client.pipeline().set_unhandled_sink(move |u| {
        if let Unhandled::Exception(e) = u {
            e2.borrow_mut().push(e.code().to_string());
        }
    });
    // Make the client's descriptor refer to /dev/null, which epoll refuses (EPERM).
    let fd = client.raw_fd().expect("client socket");
    let devnull = std::fs::File::open("/dev/null").unwrap();
    // SAFETY: both descriptors are open; dup2 replaces `fd` (the client's socket, owned by the
    // channel, which closes it later) with a duplicate of /dev/null.
    let r = unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&devnull), fd) };
    assert_eq!(r, fd);
    fail_next_poll.store(true, Ordering::SeqCst);
    assert!(net.driver.run_once().selector_rebuilt);
    net.run_until("the client closed itself", || !client.is_open());
    assert_eq!(
        errors.borrow().len(),
        1,
        "reported once: {:?}",
        errors.borrow()
    );
    assert!(
        server.is_open(),
        "the other channels moved to the new selector"
    );
    // The accepted child sees its peer go (dup2 closed the socket) and closes too.
    net.run_until("only the server is left", || net.lp.registered_count() == 1);
    // The server's listener was moved: it still accepts.
    let before = accepted_count();
    let (_c, connected) = net.client(
        ChannelOptions::default(),
        no_child,
        server.local_addr().unwrap(),
    );
    net.run_until("accepted on the rebuilt selector", || {
        connected.is_done() && accepted_count() > before
    });
}
