//! Appending a read to a decoder's cumulation buffer (Netty's `MERGE_CUMULATOR`), for the
//! decoders that keep their own `BytesMut` (RESP, the HTTP client).

use bytes::BytesMut;

/// Appends `data` to `buf`, growing it by at least its length so far when it must grow.
///
/// Decoded messages are views of the cumulation (`split_to(..).freeze()`), and while one is
/// alive `BytesMut::reserve` cannot reclaim the front of the allocation: growing only by what
/// a read needs would then copy the whole buffer on nearly every read. Doubling keeps the
/// copying amortised O(1) per byte, whatever the reads' sizes.
///
/// ```
/// use netloop_transport::{append_to_cumulation, BytesMut};
/// let mut buf = BytesMut::new();
/// append_to_cumulation(&mut buf, b"PING\r\n");
/// assert_eq!(&buf[..], b"PING\r\n");
/// ```
pub fn append_to_cumulation(buf: &mut BytesMut, data: &[u8]) {
    if buf.capacity() - buf.len() < data.len() {
        buf.reserve(data.len().max(buf.len()));
    }
    buf.extend_from_slice(data);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appending_byte_by_byte_copies_a_linear_number_of_bytes() {
        let mut buf = BytesMut::new();
        let mut copied = 0usize;
        let mut last_ptr = buf.as_ptr();
        for i in 0..(1usize << 20) {
            append_to_cumulation(&mut buf, &[i as u8]);
            if buf.as_ptr() != last_ptr {
                copied += buf.len();
                last_ptr = buf.as_ptr();
            }
        }
        assert!(copied <= 4 << 20, "copied {copied} bytes for 1 MiB");
    }
}
