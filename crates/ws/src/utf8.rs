//! [`Utf8Validator`]: UTF-8 validation of text that arrives in pieces (the fragments of a
//! message), failing as soon as a byte cannot continue valid UTF-8, as RFC 6455 §8.1 asks.
//!
//! State: at most 3 bytes of a character cut at the end of the last piece.

/// Incremental UTF-8 validation.
#[derive(Debug, Default, Clone)]
pub struct Utf8Validator {
    carry: [u8; 4],
    carried: usize,
}

/// The text is not UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidUtf8;

/// Bytes in the character a leading byte starts (0 for a byte that cannot lead).
fn char_width(lead: u8) -> usize {
    match lead {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 0,
    }
}

impl Utf8Validator {
    /// Checks the next piece. An error is final: the text cannot become valid.
    pub fn feed(&mut self, mut data: &[u8]) -> Result<(), InvalidUtf8> {
        if self.carried > 0 {
            let width = char_width(self.carry[0]);
            let take = (width - self.carried).min(data.len());
            self.carry[self.carried..self.carried + take].copy_from_slice(&data[..take]);
            self.carried += take;
            data = &data[take..];
            match std::str::from_utf8(&self.carry[..self.carried]) {
                Ok(_) => self.carried = 0,
                Err(e) if e.error_len().is_none() => return Ok(()),
                Err(_) => return Err(InvalidUtf8),
            }
        }
        match std::str::from_utf8(data) {
            Ok(_) => Ok(()),
            Err(e) if e.error_len().is_none() => {
                let tail = &data[e.valid_up_to()..];
                self.carry[..tail.len()].copy_from_slice(tail);
                self.carried = tail.len();
                Ok(())
            }
            Err(_) => Err(InvalidUtf8),
        }
    }

    /// Whether the text fed so far ends at a character boundary (a message may end here).
    pub fn is_complete(&self) -> bool {
        self.carried == 0
    }

    /// Forgets any cut character (a new message starts).
    pub fn reset(&mut self) {
        self.carried = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `text` cut at every pair of points and compares with `from_utf8`.
    fn agrees_at_every_cut(text: &[u8]) {
        let whole = std::str::from_utf8(text).is_ok();
        for i in 0..=text.len() {
            for j in i..=text.len() {
                let mut v = Utf8Validator::default();
                let ok = v.feed(&text[..i]).is_ok()
                    && v.feed(&text[i..j]).is_ok()
                    && v.feed(&text[j..]).is_ok()
                    && v.is_complete();
                assert_eq!(ok, whole, "{text:x?} cut at {i}, {j}");
            }
        }
    }

    #[test]
    fn validation_does_not_depend_on_where_the_text_is_cut() {
        agrees_at_every_cut("κόσμε €𝄞 a".as_bytes());
        agrees_at_every_cut(b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80edited");
        agrees_at_every_cut(b"\xf4\x90\x80\x80");
        agrees_at_every_cut(b"ab\xc0\xaf");
        agrees_at_every_cut(b"\xe2\x82");
        agrees_at_every_cut(b"\xf0\x9d\x84\x9e\x80");
    }

    #[test]
    fn an_impossible_byte_fails_at_once_before_the_text_ends() {
        let mut v = Utf8Validator::default();
        assert_eq!(
            v.feed(b"hello \xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4\x90"),
            Err(InvalidUtf8)
        );
        let mut v = Utf8Validator::default();
        assert!(v.feed(b"\xf4").is_ok());
        assert_eq!(
            v.feed(b"\x90"),
            Err(InvalidUtf8),
            "U+110000 and above fail on the 2nd byte"
        );
        let mut v = Utf8Validator::default();
        assert!(v.feed(b"\xe2\x82").is_ok());
        assert!(!v.is_complete());
        assert!(v.feed(b"\xac").is_ok());
        assert!(v.is_complete());
    }
}
