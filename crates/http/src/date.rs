//! The `Date` header value (IMF-fixdate, RFC 9110 §5.6.7), formatted at most once a second
//! per thread.
//!
//! Ground rules: the value is a function of the wall clock's second alone, so one
//! thread-local entry (the last second formatted and its text) serves every codec and loop of
//! a thread, whatever clock each reads (tests give their own). The default clock is the
//! kernel's coarse realtime clock ([`coarse_wall_clock`]): a read costs a few nanoseconds
//! (no TSC read) and lags the precise clock by at most one scheduler tick, far below the
//! header's one-second resolution.

use std::cell::Cell;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Length of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub const DATE_LEN: usize = 29;

/// A formatted date.
pub type DateValue = [u8; DATE_LEN];

thread_local! {
    /// The last second formatted on this thread (`u64::MAX`: none yet) and its text.
    static LAST: Cell<(u64, DateValue)> = const { Cell::new((u64::MAX, [0; DATE_LEN])) };
}

/// The date showing `wall`: formatted once per second of it, per thread.
pub fn cached_date(wall: SystemTime) -> DateValue {
    cached_secs(unix_secs(wall))
}

/// [`cached_date`] of [`coarse_wall_clock`] without a `SystemTime` made and taken apart (the
/// codec's default clock, read once or twice per request: the two conversions cost more than
/// the clock read).
pub(crate) fn coarse_date() -> DateValue {
    match coarse_timespec() {
        Some((secs, _)) => cached_secs(secs),
        None => cached_date(SystemTime::now()),
    }
}

/// `CLOCK_REALTIME_COARSE` as whole seconds and nanoseconds since the epoch; `None` where it
/// cannot be read (or reads before the epoch).
fn coarse_timespec() -> Option<(u64, u32)> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
    if rc != 0 {
        return None;
    }
    Some((
        u64::try_from(ts.tv_sec).ok()?,
        u32::try_from(ts.tv_nsec).ok()?,
    ))
}

/// The date of Unix second `secs`, formatted once per second per thread.
fn cached_secs(secs: u64) -> DateValue {
    LAST.with(|last| {
        let (cached, value) = last.get();
        if cached == secs {
            return value;
        }
        let value = format_secs(secs);
        last.set((secs, value));
        value
    })
}

/// The wall clock at the kernel's coarse resolution (`CLOCK_REALTIME_COARSE`: one scheduler
/// tick, 1 to 10 ms), the default clock of the `Date` header; the precise clock where the
/// coarse one cannot be read.
pub fn coarse_wall_clock() -> SystemTime {
    match coarse_timespec() {
        Some((secs, nanos)) => UNIX_EPOCH + Duration::new(secs, nanos),
        None => SystemTime::now(),
    }
}

fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Uses of one [`BurstDate`] value at most before the clock is read again.
const BURST_USES: u32 = 256;

/// The `Date` of one burst of a codec's work (a read and the requests it holds, or the writes
/// before a flush): the clock is read once per burst instead of once per request and response.
/// The codec ends a burst at each read, read completion and flush, and after [`BURST_USES`]
/// uses, so a date is never older than the burst it was read in.
#[derive(Debug, Default)]
pub(crate) struct BurstDate {
    value: std::cell::Cell<Option<DateValue>>,
    uses: std::cell::Cell<u32>,
}

impl BurstDate {
    /// The burst's date, from `read` if the burst has none yet.
    pub(crate) fn get(&self, read: impl FnOnce() -> DateValue) -> DateValue {
        if let Some(v) = self.value.get() {
            let uses = self.uses.get();
            if uses < BURST_USES {
                self.uses.set(uses + 1);
                return v;
            }
        }
        let v = read();
        self.value.set(Some(v));
        self.uses.set(1);
        v
    }

    /// Ends the burst: the next use reads the clock.
    pub(crate) fn end(&self) {
        self.value.set(None);
    }
}

const DAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// Formats `t` as an IMF-fixdate (times before 1970 show as 1970).
pub fn format_date(t: SystemTime) -> DateValue {
    format_secs(unix_secs(t))
}

fn format_secs(secs: u64) -> DateValue {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    let mut out = *b"Thu, 01 Jan 1970 00:00:00 GMT";
    out[..3].copy_from_slice(DAYS[(days % 7) as usize]);
    two(&mut out[5..7], day);
    out[8..11].copy_from_slice(MONTHS[(month - 1) as usize]);
    let y = year.min(9999);
    two(&mut out[12..14], y / 100);
    two(&mut out[14..16], y % 100);
    two(&mut out[17..19], rem / 3600);
    two(&mut out[20..22], rem % 3600 / 60);
    two(&mut out[23..25], rem % 60);
    out
}

fn two(dst: &mut [u8], n: u64) {
    dst[0] = b'0' + (n / 10 % 10) as u8;
    dst[1] = b'0' + (n % 10) as u8;
}

/// Year, month (1..=12) and day (1..=31) of the day `days` after 1970-01-01 (the proleptic
/// Gregorian calendar, counted in 400-year eras of 146,097 days from 0000-03-01).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_reads_the_clock_once_until_it_ends_or_is_used_up() {
        let burst = BurstDate::default();
        let reads = std::cell::Cell::new(0u32);
        let read = || {
            reads.set(reads.get() + 1);
            [b'x'; DATE_LEN]
        };
        for _ in 0..10 {
            burst.get(read);
        }
        assert_eq!(reads.get(), 1);
        burst.end();
        burst.get(read);
        assert_eq!(reads.get(), 2);
        for _ in 0..BURST_USES {
            burst.get(read);
        }
        assert_eq!(reads.get(), 3, "read again after BURST_USES uses");
    }

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn formats_imf_fixdate() {
        assert_eq!(
            &format_date(at(784_111_777)),
            b"Sun, 06 Nov 1994 08:49:37 GMT"
        );
        assert_eq!(&format_date(at(0)), b"Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(
            &format_date(at(951_782_400)),
            b"Tue, 29 Feb 2000 00:00:00 GMT"
        );
        assert_eq!(
            &format_date(at(1_709_251_199)),
            b"Thu, 29 Feb 2024 23:59:59 GMT"
        );
    }

    #[test]
    fn the_cached_value_is_the_second_of_the_clock_given() {
        let first = cached_date(at(0) + Duration::from_millis(10));
        assert_eq!(&first, b"Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(cached_date(at(0) + Duration::from_millis(990)), first);
        assert_eq!(&cached_date(at(1)), b"Thu, 01 Jan 1970 00:00:01 GMT");
        assert_eq!(&cached_date(at(86_400)), b"Fri, 02 Jan 1970 00:00:00 GMT");
        assert_eq!(
            &cached_date(at(0)),
            b"Thu, 01 Jan 1970 00:00:00 GMT",
            "back: no stale text"
        );
    }

    #[test]
    fn the_coarse_date_is_the_date_of_the_coarse_clock() {
        // Taken between two reads of the clock: one of their dates (a second may turn between).
        let before = cached_date(coarse_wall_clock());
        let date = coarse_date();
        let after = cached_date(coarse_wall_clock());
        assert!(
            date == before || date == after,
            "{:?}",
            String::from_utf8_lossy(&date)
        );
    }

    #[test]
    fn the_coarse_clock_is_within_a_tick_of_the_precise_one() {
        let before = SystemTime::now();
        let coarse = coarse_wall_clock();
        let after = SystemTime::now();
        // A coarse read lags by at most a tick (10 ms at HZ=100); allow for scheduling.
        assert!(coarse <= after, "{coarse:?} after {after:?}");
        let lag = before.duration_since(coarse).unwrap_or_default();
        assert!(lag < Duration::from_millis(100), "lags {lag:?}");
    }
}
