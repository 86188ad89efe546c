//! Request boxes kept for reuse. The codec fires each request boxed (a `Message::User`), and a
//! JS stand-in keeps a read batch's requests until the delivery ends (wire's `held.rs`): with
//! 30 to 50 requests a batch, allocated one by one and freed together, the allocator's
//! per-thread cache (seven blocks a size) overflows, and each box cost a trip through its
//! bins (about 370 instructions a request for the pair, callgrind). A box given back with
//! [`recycle_request`] has its request dropped at once and its memory kept for the next one.
//!
//! A frozen response's write goes the same way (boxed by wire's op reader, taken apart by the
//! codec's `write`): about 130 instructions a response for the pair.
//!
//! Ground rules: per thread (`thread_local!`), at most [`KEEP`] boxes of each type kept; a box
//! is reused only for a value of its type (its layout); the memory kept is freed when the
//! thread ends.

use std::alloc::{dealloc, Layout};
use std::cell::RefCell;
use std::ptr::NonNull;
use std::thread::LocalKey;

use crate::{FrozenResponse, HttpRequest};

/// The most boxes a thread keeps of each type (about 80 KiB of requests).
const KEEP: usize = 256;

/// The memory of a box of a `T`, without a value in it.
struct Spare<T>(NonNull<T>);

impl<T> Drop for Spare<T> {
    fn drop(&mut self) {
        // SAFETY: the memory was allocated for a `T` (by `Box`, with its layout, from the
        // global allocator) and holds no value; it is freed once, here.
        unsafe { dealloc(self.0.as_ptr().cast(), Layout::new::<T>()) }
    }
}

type Spares<T> = RefCell<Vec<Spare<T>>>;

thread_local! {
    static REQUESTS: Spares<HttpRequest> = const { RefCell::new(Vec::new()) };
    static FROZEN: Spares<FrozenResponse> = const { RefCell::new(Vec::new()) };
}

/// `value` in a box, the memory of one given back reused when there is one.
fn boxed<T>(list: &'static LocalKey<Spares<T>>, value: T) -> Box<T> {
    let Some(spare) = list.try_with(|s| s.borrow_mut().pop()).ok().flatten() else {
        return Box::new(value);
    };
    let ptr = spare.0;
    std::mem::forget(spare);
    // SAFETY: `ptr` is valid, aligned memory for one `T` from the global allocator, holding
    // no value and owned by nobody else (taken out of the list, its `Spare` forgotten): the
    // value is written into it, and the box then owns both (as `Box::new` would).
    unsafe {
        ptr.as_ptr().write(value);
        Box::from_raw(ptr.as_ptr())
    }
}

/// Keeps the memory of an emptied box (or frees it, past [`KEEP`] or while the thread ends).
fn keep<T>(list: &'static LocalKey<Spares<T>>, spare: Spare<T>) {
    let _ = list.try_with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < KEEP {
            s.push(spare);
        }
    });
}

/// `req` in a box, the memory of one given back reused when there is one.
pub fn boxed_request(req: HttpRequest) -> Box<HttpRequest> {
    boxed(&REQUESTS, req)
}

/// Drops the request and keeps its box's memory for [`boxed_request`].
pub fn recycle_request(req: Box<HttpRequest>) {
    let raw = Box::into_raw(req);
    // SAFETY: `raw` is the box's value, dropped once here; the memory is then owned by the
    // `Spare` only (`HttpRequest` is not zero-sized, so the box did allocate it).
    let spare = unsafe {
        std::ptr::drop_in_place(raw);
        Spare(NonNull::new_unchecked(raw))
    };
    keep(&REQUESTS, spare);
}

/// A frozen response's write in a box (a `Message::User`), reusing the memory of one the
/// codec took apart with [`unbox_frozen`].
pub fn boxed_frozen(frozen: FrozenResponse) -> Box<FrozenResponse> {
    boxed(&FROZEN, frozen)
}

/// The frozen response out of its box, whose memory is kept for [`boxed_frozen`].
pub(crate) fn unbox_frozen(frozen: Box<FrozenResponse>) -> FrozenResponse {
    let raw = Box::into_raw(frozen);
    // SAFETY: `raw` is the box's value, moved out once here (read); the memory is then owned
    // by the `Spare` only, without a value (`FrozenResponse` is not zero-sized).
    unsafe {
        let value = raw.read();
        keep(&FROZEN, Spare(NonNull::new_unchecked(raw)));
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn request(id: u64) -> HttpRequest {
        HttpRequest {
            id,
            method: Bytes::from_static(b"GET"),
            target: Bytes::from(format!("/{id}")),
            version: crate::Version::Http11,
            headers: crate::Headers::default(),
            body: Bytes::new(),
            streaming: false,
            trailers: Vec::new(),
            keep_alive: true,
            expect_continue: false,
            upgrade: false,
        }
    }

    #[test]
    fn a_recycled_box_holds_the_next_request_and_drops_the_old_one_at_once() {
        let body = Bytes::from(vec![7u8; 100]);
        let mut first = request(1);
        first.body = body.clone();
        let b = boxed_request(first);
        let at = &*b as *const HttpRequest;
        recycle_request(b);
        assert!(body.is_unique(), "the recycled request was dropped");
        let b = boxed_request(request(2));
        assert_eq!(&*b as *const HttpRequest, at, "the memory was reused");
        assert_eq!(*b, request(2));
        drop(b); // an ordinary drop frees it
        let many: Vec<_> = (0..KEEP as u64 + 10)
            .map(|i| boxed_request(request(i)))
            .collect();
        many.into_iter().for_each(recycle_request);
        assert_eq!(REQUESTS.with(|s| s.borrow().len()), KEEP);
        assert_eq!(*boxed_request(request(9)), request(9));
    }
}
