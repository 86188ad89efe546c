//! File regions written from JS (`FileRegion` in src/file-region.ts): the layout
//! `fd:u32 position:f64 count:f64` (20 bytes, little-endian), alone as a `WriteFile` op's
//! message or inside an HTTP response whose body is a file.
//!
//! Ground rule: the descriptor is handed over. JS opened it, wrote it into the layout once and
//! marked its `FileRegion` sent, so it never closes it; from the moment the layout is read here
//! the descriptor belongs to the region's `File`, which closes it when the region is written,
//! fails or is dropped (a write to a closed channel included). A layout must therefore be read
//! exactly once.

use std::fs::File;
use std::os::fd::FromRawFd;
use std::sync::Arc;

use netloop_transport::FileRegion;

use super::http_wire::Reader;

/// Reads a region's layout, taking its descriptor.
pub(super) fn read_region(r: &mut Reader<'_>) -> Result<FileRegion, String> {
    let fd = r.u32()?;
    let position = r.f64()?;
    let count = r.f64()?;
    let fd = i32::try_from(fd).map_err(|_| format!("bad file descriptor {fd} from JS"))?;
    // SAFETY: JS handed this open descriptor over with the write (see the module docs): it
    // never closes or reuses it after writing the layout, and the layout is read once, so
    // the File below is its only owner.
    let file = unsafe { File::from_raw_fd(fd) };
    let whole = |v: f64, what: &str| {
        if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= 9_007_199_254_740_991.0 {
            Ok(v as u64)
        } else {
            Err(format!("bad file region {what} {v} from JS"))
        }
    };
    let position = whole(position, "position")?;
    let count = whole(count, "count")?;
    Ok(FileRegion::new(Arc::new(file), position, count))
}

/// The region of a `WriteFile` op's layout.
pub fn from_js(data: &bytes::Bytes) -> Result<FileRegion, String> {
    let mut r = Reader { data, at: 0 };
    read_region(&mut r)
}
