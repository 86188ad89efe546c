//! The table of I/O sources registered on one loop.
//!
//! Ground rules: loop thread only. A token carries the slot index and the slot's generation,
//! so a stale event for a source deregistered earlier in the same batch is never delivered to
//! a newer source that reuses the slot.

use std::io;
use std::rc::Rc;

use mio::{Registry, Token};

/// What the selector reported for one source. Events can be spurious: handlers must read or
/// write until `WouldBlock` and tolerate readiness that leads nowhere.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Readiness {
    /// The source can be read (or a listener can accept).
    pub readable: bool,
    /// The source can be written to (or a connect finished).
    pub writable: bool,
    /// The peer will send no more (FIN or HUP).
    pub read_closed: bool,
    /// The connection can no longer be written to (HUP or reset).
    pub write_closed: bool,
    /// An error is pending on the socket (ERR).
    pub error: bool,
}

impl Readiness {
    pub(crate) fn from_event(e: &mio::event::Event) -> Self {
        Readiness {
            readable: e.is_readable(),
            writable: e.is_writable(),
            read_closed: e.is_read_closed(),
            write_closed: e.is_write_closed(),
            error: e.is_error(),
        }
    }
}

/// A source registered on a loop (a channel). Called on the loop's thread only.
pub trait IoHandler {
    /// The selector reported readiness for this handler's token.
    fn ready(&self, readiness: Readiness);

    /// The loop rebuilt its selector: deregister the source from `old` (mio ties a source to
    /// one registry) and register it on `new` with `token` and the interest it wants now.
    /// An `Err` is handed to [`IoHandler::reregister_failed`].
    fn reregister(&self, old: &Registry, new: &Registry, token: Token) -> io::Result<()>;

    /// [`IoHandler::reregister`] failed: the source is registered nowhere and will receive no
    /// more readiness. The handler must give up the source (a channel fires
    /// `exceptionCaught` with `error`, then closes itself). The default logs the error.
    fn reregister_failed(&self, error: io::Error) {
        crate::log::error(&format!(
            "netloop: re-registering a source after a selector rebuild failed: {error}"
        ));
    }

    /// The loop started shutting down: close the source (Netty's `closeAll`).
    fn close_on_shutdown(&self) {}

    /// The loop terminates and the source is still registered: the close asked for at the
    /// start of the shutdown has not happened (a handler held it, or had not finished when the
    /// shutdown's timeout passed). Close it now, at once, so that no socket outlives its loop
    /// and nothing waits on it for ever (a channel fails its pending writes).
    fn close_on_termination(&self) {}
}

/// Moves `source` from the registry of a replaced selector to `new` (for
/// [`IoHandler::reregister`]). The old selector is being dropped, so a failure to deregister
/// from it changes nothing and is ignored.
pub fn move_source(
    source: &mut dyn mio::event::Source,
    old: &Registry,
    new: &Registry,
    token: Token,
    interest: mio::Interest,
) -> io::Result<()> {
    let _ = source.deregister(old);
    source.register(new, token, interest)
}

struct Slot {
    generation: u32,
    handler: Option<Rc<dyn IoHandler>>,
}

/// Slab of handlers indexed by token.
#[derive(Default)]
pub(crate) struct IoTable {
    slots: Vec<Slot>,
    free: Vec<u32>,
    live: usize,
}

/// Token value reserved for the loop's waker.
pub(crate) const WAKER_TOKEN: Token = Token(usize::MAX);

fn token_of(index: u32, generation: u32) -> Token {
    Token(((generation as usize) << 32) | index as usize)
}

fn split(token: Token) -> (u32, u32) {
    ((token.0 & 0xffff_ffff) as u32, (token.0 >> 32) as u32)
}

impl IoTable {
    pub fn insert(&mut self, handler: Rc<dyn IoHandler>) -> Token {
        self.live += 1;
        if let Some(index) = self.free.pop() {
            let slot = &mut self.slots[index as usize];
            slot.generation = slot.generation.wrapping_add(1) & 0x7fff_ffff;
            slot.handler = Some(handler);
            return token_of(index, slot.generation);
        }
        let index = self.slots.len() as u32;
        self.slots.push(Slot {
            generation: 0,
            handler: Some(handler),
        });
        token_of(index, 0)
    }

    pub fn get(&self, token: Token) -> Option<Rc<dyn IoHandler>> {
        let (index, generation) = split(token);
        let slot = self.slots.get(index as usize)?;
        if slot.generation != generation {
            return None;
        }
        slot.handler.clone()
    }

    /// Removes the handler of `token` and returns it (for the caller to drop after its
    /// borrow of the table ended).
    pub fn remove(&mut self, token: Token) -> Option<Rc<dyn IoHandler>> {
        let (index, generation) = split(token);
        match self.slots.get_mut(index as usize) {
            Some(slot) if slot.generation == generation && slot.handler.is_some() => {
                self.free.push(index);
                self.live -= 1;
                slot.handler.take()
            }
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        self.live
    }

    /// Every live (token, handler) pair, for re-registration after a selector rebuild.
    pub fn entries(&self) -> Vec<(Token, Rc<dyn IoHandler>)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                s.handler
                    .clone()
                    .map(|h| (token_of(i as u32, s.generation), h))
            })
            .collect()
    }
}
