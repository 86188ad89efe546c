//! Numbers on RESP lines: lengths, integers, doubles and big numbers, parsed strictly from
//! the line's bytes (CRLF excluded). Every function is total: bad input is `None`/`false`,
//! never a panic.

/// A length or count line's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Length {
    /// `-1`: the RESP2 null (allowed only for `$` and `*`).
    Null,
    /// A non-negative count.
    Count(u64),
}

/// `-1`, or ASCII digits (leading zeros allowed) that fit a `u64`.
pub(crate) fn parse_length(line: &[u8]) -> Option<Length> {
    if line == b"-1" {
        return Some(Length::Null);
    }
    parse_digits(line).map(Length::Count)
}

/// One or more ASCII digits that fit a `u64`.
fn parse_digits(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    let mut value: u64 = 0;
    for &b in digits {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(digit))?;
    }
    Some(value)
}

/// An optional `+` or `-`, then digits, in the range of `i64`.
pub(crate) fn parse_integer(line: &[u8]) -> Option<i64> {
    let (negative, digits) = split_sign(line);
    let magnitude = parse_digits(digits)?;
    if negative {
        // i64::MIN's magnitude is one more than i64::MAX.
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

fn split_sign(line: &[u8]) -> (bool, &[u8]) {
    match line.first() {
        Some(b'-') => (true, &line[1..]),
        Some(b'+') => (false, &line[1..]),
        _ => (false, line),
    }
}

/// `inf`, `-inf`, `+inf`, `nan` (any case), or a decimal number with an optional fraction
/// and exponent.
pub(crate) fn parse_double(line: &[u8]) -> Option<f64> {
    let (negative, rest) = split_sign(line);
    if rest.eq_ignore_ascii_case(b"inf") {
        return Some(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if line.eq_ignore_ascii_case(b"nan") {
        return Some(f64::NAN);
    }
    // Keep the standard parser's other spellings ("infinity", "NaN" with a sign) out.
    if !line
        .iter()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
    {
        return None;
    }
    std::str::from_utf8(line).ok()?.parse().ok()
}

/// An optional sign, then one or more digits.
pub(crate) fn is_big_number(line: &[u8]) -> bool {
    let (_, digits) = split_sign(line);
    !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_minus_one_or_unsigned_digits() {
        assert_eq!(parse_length(b"-1"), Some(Length::Null));
        assert_eq!(parse_length(b"0"), Some(Length::Count(0)));
        assert_eq!(parse_length(b"0042"), Some(Length::Count(42)));
        assert_eq!(
            parse_length(b"18446744073709551615"),
            Some(Length::Count(u64::MAX))
        );
        for bad in [
            &b""[..],
            b"-2",
            b"+1",
            b"1a",
            b" 1",
            b"18446744073709551616",
            b"-",
        ] {
            assert_eq!(
                parse_length(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn integers_cover_the_whole_i64_range_with_an_optional_sign() {
        assert_eq!(parse_integer(b"0"), Some(0));
        assert_eq!(parse_integer(b"+12"), Some(12));
        assert_eq!(parse_integer(b"-12"), Some(-12));
        assert_eq!(parse_integer(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_integer(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"-",
            b"+",
            b"9223372036854775808",
            b"1.0",
            b"--1",
            b"1 ",
        ] {
            assert_eq!(
                parse_integer(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn doubles_accept_resp3_spellings_only() {
        assert_eq!(parse_double(b"1.5"), Some(1.5));
        assert_eq!(parse_double(b"-2e3"), Some(-2000.0));
        assert_eq!(parse_double(b"10"), Some(10.0));
        assert_eq!(parse_double(b"inf"), Some(f64::INFINITY));
        assert_eq!(parse_double(b"-inf"), Some(f64::NEG_INFINITY));
        assert!(parse_double(b"nan").is_some_and(f64::is_nan));
        for bad in [&b""[..], b"infinity", b"-nan", b"1,5", b"0x10", b"e", b"1e"] {
            assert_eq!(
                parse_double(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn big_numbers_are_signed_digit_strings() {
        assert!(is_big_number(
            b"3492890328409238509324850943850943825024385"
        ));
        assert!(is_big_number(b"-1"));
        assert!(!is_big_number(b""));
        assert!(!is_big_number(b"-"));
        assert!(!is_big_number(b"12a"));
    }
}
