//! The one place the runtime reads the clock.

use std::time::{SystemTime, UNIX_EPOCH};

/// Epoch milliseconds now (a test's manual time on its thread, when it set one).
pub fn now_ms() -> u64 {
    #[cfg(any(test, feature = "test-support"))]
    if let Some(ms) = MANUAL.with(std::cell::Cell::get) {
        return ms;
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(any(test, feature = "test-support"))]
thread_local! {
    static MANUAL: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// Sets this thread's time to `ms` epoch milliseconds (`None`: the system clock again), for
/// tests that run a turn on their own thread ([`crate::testing::Turns`]). Code the turn runs
/// on other threads (hooks, scripts) keeps the system clock.
#[cfg(any(test, feature = "test-support"))]
pub fn set_manual(ms: Option<u64>) {
    MANUAL.with(|m| m.set(ms));
}

/// Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let m = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    (if m <= 2 { y + 1 } else { y }, m, d)
}

const WEEKDAYS: [&str; 7] = [
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
];

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for epoch milliseconds.
pub fn iso(ms: u64) -> String {
    let secs = i64::try_from(ms / 1000).unwrap_or(0);
    let (y, mo, d) = civil(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// Days since 1970-01-01 of a civil date (the inverse of [`civil`]).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Epoch milliseconds of a UTC time written `YYYY-MM-DDTHH:MM:SS[.fff]Z` (what [`iso`]
/// writes, and what park records and `resumeAt` hold); `None` for anything else, or a
/// time before 1970.
pub fn parse_iso(text: &str) -> Option<u64> {
    let t = text
        .trim()
        .strip_suffix('Z')
        .or_else(|| text.trim().strip_suffix('z'))?;
    let (date, time) = t.split_once(['T', 't'])?;
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let mut d = date.splitn(3, '-');
    let (y, mo, day) = (num(d.next()?)?, num(d.next()?)?, num(d.next()?)?);
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut h = hms.splitn(3, ':');
    let (hh, mm, ss) = (num(h.next()?)?, num(h.next()?)?, num(h.next()?)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&day) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let ms = if frac.is_empty() {
        0
    } else {
        let digits: String = frac.chars().chain("000".chars()).take(3).collect();
        num(&digits)?
    };
    let secs = days_from_civil(y, mo, day) * 86_400 + hh * 3600 + mm * 60 + ss;
    u64::try_from(secs * 1000 + ms).ok()
}

/// How the prompt's clock line begins.
const CLOCK_HEAD: &str = "Current date and time: ";

/// How the prompt's clock line ends.
const CLOCK_TAIL: &str = " — it can be that much behind.";

/// What [`mask_clock`] puts in place of a clock line's date and time.
pub const CLOCK_MASK: &str = "<clock>";

/// The prompt's clock line: UTC, floored to ten minutes so every call of a turn
/// renders the same bytes.
pub fn clock_line(ms: u64) -> String {
    let secs = i64::try_from(ms / 1000).unwrap_or(0);
    let floored = secs - secs.rem_euclid(600);
    let days = floored.div_euclid(86_400);
    let (y, mo, d) = civil(days);
    let rem = floored.rem_euclid(86_400);
    let weekday = WEEKDAYS[usize::try_from(days.rem_euclid(7)).unwrap_or(0)];
    format!(
        "{CLOCK_HEAD}{y:04}-{mo:02}-{d:02} {:02}:{:02} UTC ({weekday}), rounded down to the nearest 10 minutes{CLOCK_TAIL}",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// `text` with the date and time of every clock line ([`clock_line`]) replaced by
/// [`CLOCK_MASK`]: the same prompt rendered at two times reads the same (a recorded
/// request matches its replay an hour later).
pub fn mask_clock(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(CLOCK_HEAD) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(CLOCK_HEAD) {
        let after = at + CLOCK_HEAD.len();
        let Some(len) = rest[after..]
            .find(CLOCK_TAIL)
            .filter(|len| !rest[after..after + len].contains('\n'))
        else {
            out.push_str(&rest[..after]);
            rest = &rest[after..];
            continue;
        };
        out.push_str(&rest[..after]);
        out.push_str(CLOCK_MASK);
        rest = &rest[after + len..];
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_clocks_read_the_same_at_any_time() {
        let at = |ms| format!("Intro.\n\n{}\n\n## State", clock_line(ms));
        let one = at(1_772_357_999_000);
        let two = at(1_772_390_000_000);
        assert_ne!(one, two);
        assert_eq!(mask_clock(&one), mask_clock(&two));
        assert_eq!(
            mask_clock(&one),
            "Intro.\n\nCurrent date and time: <clock> — it can be that much behind.\n\n## State"
        );
        let prose = "Current date and time: unknown.\nLater — it can be that much behind.";
        assert_eq!(mask_clock(prose), prose);
    }

    #[test]
    fn iso_times_read_back() {
        for ms in [0, 1_772_357_400_123, 951_782_400_000, 4_102_444_799_999] {
            assert_eq!(parse_iso(&iso(ms)), Some(ms), "{}", iso(ms));
        }
        assert_eq!(parse_iso("2026-03-01T09:30:00Z"), Some(1_772_357_400_000));
        assert_eq!(parse_iso("2026-03-01T09:30:00.5Z"), Some(1_772_357_400_500));
        for bad in [
            "",
            "2026-03-01",
            "2026-13-01T00:00:00Z",
            "2026-03-01T09:30:00+01:00",
            "x",
        ] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
    }

    #[test]
    fn dates_render_in_utc() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(1_772_357_400_123), "2026-03-01T09:30:00.123Z");
        assert_eq!(
            clock_line(1_772_357_999_000),
            "Current date and time: 2026-03-01 09:30 UTC (Sunday), rounded down to the nearest 10 minutes — it can be that much behind."
        );
    }
}
