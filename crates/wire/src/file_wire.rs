//! File regions written from JS (`FileRegion` in src/file-region.ts): the layout
//! `fd:u32 position:f64 count:f64` (20 bytes, little-endian), alone as a `WriteFile` op's
//! message or inside an HTTP response whose body is a file.
//!
//! Ground rules:
//! - A plain descriptor is handed over. JS opened it, wrote it into the layout once and marked
//!   its `FileRegion` sent, so it never closes it; from the moment the layout is read here the
//!   descriptor belongs to the region's `File`, which closes it when the region is written,
//!   fails or is dropped (a write to a closed channel included). A layout must therefore be
//!   read exactly once.
//! - With its top bit set, the `fd` field names a shared file instead (`SharedFile` in JS,
//!   `fileShare`): an open file in this thread's table, which each region clones (`Arc`). JS
//!   frees the id (`fileRelease`) in a microtask after `close()` or when the object is
//!   collected, so after the ops naming it were applied (they are applied before the JS job
//!   that made them ends); regions already made keep the file open until they are done.

use std::cell::RefCell;
use std::fs::File;
use std::os::fd::FromRawFd;
use std::sync::Arc;

use netloop_transport::FileRegion;

use crate::http_wire::Reader;
use crate::slots::Slots;

/// The `fd` field's bit that marks a shared file's id.
const SHARED_BIT: usize = 1 << 31;

thread_local! {
    /// The shared files of this thread by id (`None`: a free id, reused first).
    static SHARED: RefCell<Slots<Arc<File>>> = const { RefCell::new(Slots::new()) };
}

/// Takes over the open descriptor `fd` (JS never uses it again) as a shared file; its id.
pub fn share(fd: u32) -> Result<u32, String> {
    let raw = i32::try_from(fd).map_err(|_| format!("bad file descriptor {fd}"))?;
    // SAFETY: JS hands this open descriptor over with the call and never uses it again
    // (`SharedFile`'s constructor), so the File below is its only owner.
    let file = Arc::new(unsafe { File::from_raw_fd(raw) });
    Ok(SHARED.with(|t| t.borrow_mut().insert(file)))
}

/// Frees a shared file's id; the file closes once the regions made of it are done.
pub fn release(id: u32) {
    SHARED.with(|t| t.borrow_mut().remove(id as usize));
}

/// Reads a region's layout, taking its descriptor (or a share of its shared file).
pub fn read_region(r: &mut Reader<'_>) -> Result<FileRegion, String> {
    let fd = r.u32()?;
    let position = r.f64()?;
    let count = r.f64()?;
    let file = if fd & SHARED_BIT != 0 {
        let id = fd & !SHARED_BIT;
        let shared = SHARED.with(|t| t.borrow().get(id));
        shared.ok_or_else(|| {
            format!("no shared file {id} on this thread (closed, or opened on another thread)")
        })?
    } else {
        let fd = i32::try_from(fd).map_err(|_| format!("bad file descriptor {fd} from JS"))?;
        // SAFETY: JS handed this open descriptor over with the write (see the module docs):
        // it never closes or reuses it after writing the layout, and the layout is read once,
        // so the File below is its only owner.
        Arc::new(unsafe { File::from_raw_fd(fd) })
    };
    let whole = |v: f64, what: &str| {
        if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= 9_007_199_254_740_991.0 {
            Ok(v as u64)
        } else {
            Err(format!("bad file region {what} {v} from JS"))
        }
    };
    let position = whole(position, "position")?;
    let count = whole(count, "count")?;
    Ok(FileRegion::new(file, position, count))
}

/// The region of a `WriteFile` op's layout.
pub fn from_js(data: &bytes::Bytes) -> Result<FileRegion, String> {
    let mut r = Reader { data, at: 0 };
    read_region(&mut r)
}
