//! Inline commands: a line such as `SET "a key" 1` split into arguments the way redis-server
//! splits one (its `sdssplitargs`).
//!
//! Rules (Redis's):
//! - Arguments are separated by whitespace (space, tab, CR, LF, vertical tab, form feed).
//! - `"double quotes"` take the escapes `\n \r \t \b \a`, `\xHH` and `\<any byte>` (that byte);
//!   `'single quotes'` take only `\'`. A closing quote must be followed by whitespace or the
//!   end of the line; an unclosed quote is an error (`ERR_RESP_BAD_INLINE`).
//! - A quote inside an unquoted argument starts a quoted part of the same argument
//!   (`a"b c"` is `ab c`), and `""` is an empty argument.
//! - The line ends at its first NUL byte (Redis reads it as a C string).
//!
//! Zero-copy: an argument made of one contiguous run of the line (every unquoted argument,
//! and quoted ones without escapes) is a `Bytes` view of the line; only arguments with escapes
//! or glued quoted parts are copied.

use bytes::Bytes;

use crate::error::RespError;
use crate::value::RespValue;

/// The bytes C's `isspace` accepts in the "C" locale.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// An argument being built: nothing yet, a run of the line, or copied bytes.
enum Arg {
    Empty,
    Run(usize, usize),
    Owned(Vec<u8>),
}

impl Arg {
    /// Appends the line's byte at `i`.
    fn push_at(&mut self, line: &[u8], i: usize) {
        match self {
            Arg::Empty => *self = Arg::Run(i, i + 1),
            Arg::Run(_, end) if *end == i => *end += 1,
            _ => self.push(line, line[i]),
        }
    }

    /// Appends a byte that is not the next one of a run (an escape's value).
    fn push(&mut self, line: &[u8], b: u8) {
        match self {
            Arg::Empty => *self = Arg::Owned(vec![b]),
            Arg::Run(start, end) => {
                let mut owned = line[*start..*end].to_vec();
                owned.push(b);
                *self = Arg::Owned(owned);
            }
            Arg::Owned(v) => v.push(b),
        }
    }

    fn finish(self, line: &Bytes) -> Bytes {
        match self {
            Arg::Empty => Bytes::new(),
            Arg::Run(start, end) => line.slice(start..end),
            Arg::Owned(v) => Bytes::from(v),
        }
    }
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Splits an inline command line (line ending excluded) into its arguments, as bulk
/// strings; an empty or blank line has none.
pub(crate) fn split(line: &Bytes) -> Result<Vec<RespValue>, RespError> {
    let end = line.iter().position(|&b| b == 0).unwrap_or(line.len());
    let s = &line[..end];
    let at = |i: usize| s.get(i).copied();
    let mut args = Vec::new();
    let mut i = 0;
    loop {
        while at(i).is_some_and(is_space) {
            i += 1;
        }
        if i >= s.len() {
            return Ok(args);
        }
        let mut arg = Arg::Empty;
        let mut quote: Option<u8> = None;
        loop {
            let Some(c) = at(i) else {
                if quote.is_some() {
                    return Err(RespError::BadInline);
                }
                break;
            };
            match quote {
                Some(b'"') => match (c, at(i + 1)) {
                    (b'\\', Some(b'x'))
                        if at(i + 2).and_then(hex).is_some()
                            && at(i + 3).and_then(hex).is_some() =>
                    {
                        let hi = at(i + 2).and_then(hex).unwrap_or(0);
                        let lo = at(i + 3).and_then(hex).unwrap_or(0);
                        arg.push(s, hi * 16 + lo);
                        i += 3;
                    }
                    (b'\\', Some(e)) => {
                        let value = match e {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 0x08,
                            b'a' => 0x07,
                            other => other,
                        };
                        arg.push(s, value);
                        i += 1;
                    }
                    (b'"', next) => {
                        if next.is_some_and(|n| !is_space(n)) {
                            return Err(RespError::BadInline);
                        }
                        i += 1;
                        break;
                    }
                    _ => arg.push_at(s, i),
                },
                Some(_) => match (c, at(i + 1)) {
                    (b'\\', Some(b'\'')) => {
                        arg.push(s, b'\'');
                        i += 1;
                    }
                    (b'\'', next) => {
                        if next.is_some_and(|n| !is_space(n)) {
                            return Err(RespError::BadInline);
                        }
                        i += 1;
                        break;
                    }
                    _ => arg.push_at(s, i),
                },
                None => match c {
                    b' ' | b'\n' | b'\r' | b'\t' => {
                        i += 1;
                        break;
                    }
                    b'"' | b'\'' => quote = Some(c),
                    _ => arg.push_at(s, i),
                },
            }
            i += 1;
        }
        args.push(RespValue::BulkString(arg.finish(line)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &'static [u8]) -> Result<Vec<Vec<u8>>, RespError> {
        split(&Bytes::from_static(line)).map(|v| {
            v.iter()
                .map(|a| a.as_bytes().expect("bulk").to_vec())
                .collect()
        })
    }

    fn ok(line: &'static [u8]) -> Vec<String> {
        args(line)
            .expect("valid")
            .into_iter()
            .map(|a| String::from_utf8(a).unwrap())
            .collect()
    }

    #[test]
    fn words_are_split_on_any_run_of_whitespace() {
        assert_eq!(ok(b"SET a 1"), ["SET", "a", "1"]);
        assert_eq!(ok(b"  PING\t \x0bx\r "), ["PING", "x"]);
        assert!(ok(b"").is_empty());
        assert!(ok(b" \t ").is_empty());
    }

    #[test]
    fn quoted_arguments_keep_spaces_and_decode_escapes() {
        assert_eq!(ok(br#"SET "a key" 'it\''"#), ["SET", "a key", "it'"]);
        assert_eq!(ok(br#"ECHO "\x41\n\t\\\"\q""#), ["ECHO", "A\n\t\\\"q"]);
        assert_eq!(ok(br#"ECHO "\xZZ""#), ["ECHO", "xZZ"]);
        assert_eq!(ok(br#"ECHO '\n' ''"#), ["ECHO", "\\n", ""]);
        assert_eq!(ok(br#"a"b c" e"#), ["ab c", "e"]);
        assert_eq!(ok(br#""" x"#), ["", "x"]);
    }

    #[test]
    fn unbalanced_or_glued_closing_quotes_are_bad_inline() {
        for bad in [
            &br#"SET "a"#[..],
            b"SET 'a",
            br#"SET "a"b"#,
            b"SET 'a'b",
            br#"ECHO "\"#,
        ] {
            assert_eq!(args(bad), Err(RespError::BadInline), "{:?}", bad);
        }
    }

    #[test]
    fn the_line_ends_at_its_first_nul_as_in_redis() {
        assert_eq!(ok(b"GET a\0 b"), ["GET", "a"]);
        assert_eq!(args(b"GET \"a\0\""), Err(RespError::BadInline));
    }

    #[test]
    fn plain_and_escape_free_quoted_arguments_are_views_of_the_line() {
        let line = Bytes::from_static(b"SET \"k y\" v");
        let out = split(&line).unwrap();
        for arg in out.iter().filter_map(RespValue::as_bytes) {
            let offset = arg.as_ptr() as usize - line.as_ptr() as usize;
            assert!(offset < line.len(), "{arg:?} is a view of the line");
        }
        assert_eq!(out[1], RespValue::bulk("k y"));
    }
}
