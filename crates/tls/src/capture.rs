//! Windows in which a rustls callback hands bytes to the engine that is feeding rustls: what
//! rustls gives to a callback only (a certificate verifier, the key log) and keeps nowhere
//! the engine could read it afterwards. The engine runs its call to rustls inside
//! [`Capture::watch`]; the callback, which rustls calls synchronously on the same thread,
//! [`Capture::note`]s what it saw.
//!
//! Ground rules: one thread-local slot per kind of capture; a window sees only what is noted
//! inside it (an outer window, if any, is restored when the inner one ends); a note outside
//! any window is dropped.

use std::cell::RefCell;
use std::thread::LocalKey;

type Slot = RefCell<Option<Option<Vec<u8>>>>;

/// One kind of capture.
pub(crate) struct Capture(&'static LocalKey<Slot>);

thread_local! {
    static STAPLE_SLOT: Slot = const { RefCell::new(None) };
    static EXPORTER_SLOT: Slot = const { RefCell::new(None) };
    static SERVER_TRAFFIC_SLOT: Slot = const { RefCell::new(None) };
}

/// The OCSP response a server stapled, seen by a client's verifier (crate::verify).
pub(crate) const STAPLE: Capture = Capture(&STAPLE_SLOT);
/// The TLS 1.3 exporter secret, seen by a server's key log (crate::exporter).
pub(crate) const EXPORTER_SECRET: Capture = Capture(&EXPORTER_SLOT);
/// A TLS 1.3 server's first application traffic secret, seen by its key log: what its alerts
/// are sealed with between its Finished and the client's (crate::engine::silent_alert).
pub(crate) const SERVER_TRAFFIC_SECRET: Capture = Capture(&SERVER_TRAFFIC_SLOT);

impl Capture {
    /// Runs `f` and returns, with its result, what was noted meanwhile (the last note).
    pub(crate) fn watch<R>(&self, f: impl FnOnce() -> R) -> (R, Option<Vec<u8>>) {
        let outer = self.0.with(|s| s.replace(Some(None)));
        let r = f();
        let noted = self
            .0
            .with(|s| std::mem::replace(&mut *s.borrow_mut(), outer));
        (r, noted.flatten())
    }

    /// Keeps `bytes` for the open window, if there is one.
    pub(crate) fn note(&self, bytes: &[u8]) {
        self.0.with(|s| {
            if let Some(slot) = s.borrow_mut().as_mut() {
                *slot = Some(bytes.to_vec());
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_keeps_what_is_noted_inside_it_and_restores_the_outer_one() {
        STAPLE.note(b"outside"); // no window: dropped
        let (inner, outer) = STAPLE.watch(|| {
            STAPLE.note(b"outer");
            let ((), inner) = STAPLE.watch(|| STAPLE.note(b"inner"));
            inner
        });
        assert_eq!(inner.as_deref(), Some(&b"inner"[..]));
        assert_eq!(outer.as_deref(), Some(&b"outer"[..]));
        let ((), none) = STAPLE.watch(|| EXPORTER_SECRET.note(b"another kind"));
        assert_eq!(none, None);
    }
}
