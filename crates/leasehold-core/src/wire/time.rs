//! Time as data. The core never reads a clock: every instant is milliseconds since the Unix
//! epoch, handed in by the driver. This module only converts between that number and the two
//! text forms leasehold meets: RFC 3339 in the state document (so operators can read it) and
//! the HTTP date GitHub puts in `Date` and `Retry-After`.

/// Milliseconds since 1970-01-01T00:00:00Z.
pub type Millis = u64;

const MS_PER_DAY: u64 = 86_400_000;

/// Days since the epoch → (year, month 1-12, day 1-31). Howard Hinnant's `civil_from_days`.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) → days since the epoch. Inverse of [`civil_from_days`].
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// The last instant RFC 3339's four-digit year can name, 9999-12-31T23:59:59.999Z: the latest
/// time a document can hold.
pub const LATEST: Millis = 253_402_300_799_999;

/// `2026-11-30T02:34:58.123Z`. A time past [`LATEST`] (a lease reaching beyond the year 9999,
/// from a clock that is far off) is written as `LATEST`, so that every time written can be read
/// back: a document is never made unreadable by the time it holds (found by the `engine` fuzz
/// target, docs/fuzzing.md).
pub fn format_rfc3339(ms: Millis) -> String {
    let ms = ms.min(LATEST);
    let days = (ms / MS_PER_DAY) as i64;
    let rem = ms % MS_PER_DAY;
    let (y, mo, d) = civil_from_days(days);
    let (h, mi, s, milli) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1_000 % 60,
        rem % 1_000,
    );
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z")
}

fn digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn from_parts(y: i64, mo: u32, d: u32, h: u64, mi: u64, s: u64, milli: u64) -> Option<Millis> {
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y, mo)
    {
        return None;
    }
    if h > 23 || mi > 59 || s > 59 || milli > 999 {
        return None;
    }
    let days = u64::try_from(days_from_civil(y, mo, d)).ok()?;
    Some(days * MS_PER_DAY + h * 3_600_000 + mi * 60_000 + s * 1_000 + milli)
}

/// Parses the UTC form leasehold writes: `YYYY-MM-DDTHH:MM:SS[.fff]Z`. Anything else is `None`:
/// a state document is read strictly, never guessed at.
pub fn parse_rfc3339(text: &str) -> Option<Millis> {
    let t = text.strip_suffix('Z')?;
    let (date, clock) = t.split_once('T')?;
    let mut dp = date.split('-');
    let (y, mo, d) = (dp.next()?, dp.next()?, dp.next()?);
    if dp.next().is_some() || y.len() != 4 || mo.len() != 2 || d.len() != 2 {
        return None;
    }
    let (hms, frac) = match clock.split_once('.') {
        Some((hms, frac)) if (1..=3).contains(&frac.len()) => (hms, frac),
        Some(_) => return None,
        None => (clock, "0"),
    };
    let mut cp = hms.split(':');
    let (h, mi, s) = (cp.next()?, cp.next()?, cp.next()?);
    if cp.next().is_some() || h.len() != 2 || mi.len() != 2 || s.len() != 2 {
        return None;
    }
    let milli = digits(frac)? * 10u64.pow(3 - frac.len() as u32);
    from_parts(
        digits(y)? as i64,
        digits(mo)? as u32,
        digits(d)? as u32,
        digits(h)?,
        digits(mi)?,
        digits(s)?,
        milli,
    )
}

/// Parses a timestamp of GitHub's answers: ISO 8601 as its REST API documents it, in UTC (`Z`)
/// or with an offset (`2019-08-08T08:00:00-07:00`), with any number of fraction digits (kept to
/// the millisecond). What leasehold itself writes is read by [`parse_rfc3339`], strictly.
pub fn parse_github_time(text: &str) -> Option<Millis> {
    let (clock_end, offset_ms) = match text.strip_suffix('Z') {
        Some(t) => (t.len(), 0i64),
        None => {
            let at = text.len().checked_sub(6)?;
            let (sign, hm) = text.get(at..)?.split_at(1);
            let sign = match sign {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            let (h, m) = hm.split_once(':')?;
            if h.len() != 2 || m.len() != 2 || digits(h)? > 23 || digits(m)? > 59 {
                return None;
            }
            (
                at,
                sign * (digits(h)? * 3_600_000 + digits(m)? * 60_000) as i64,
            )
        }
    };
    let local = text.get(..clock_end)?;
    let (base, frac) = match local.split_once('.') {
        Some((base, frac)) if !frac.is_empty() && frac.bytes().all(|b| b.is_ascii_digit()) => {
            (base, &frac[..frac.len().min(3)])
        }
        Some(_) => return None,
        None => (local, ""),
    };
    let utc = if frac.is_empty() {
        format!("{base}Z")
    } else {
        format!("{base}.{frac}Z")
    };
    let at = i64::try_from(parse_rfc3339(&utc)?).ok()?;
    u64::try_from(at.checked_sub(offset_ms)?).ok()
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the only HTTP date form GitHub sends.
pub fn parse_http_date(text: &str) -> Option<Millis> {
    let rest = text.trim().split_once(", ")?.1;
    let mut p = rest.split(' ');
    let (d, mo, y, clock, zone) = (p.next()?, p.next()?, p.next()?, p.next()?, p.next()?);
    if p.next().is_some() || zone != "GMT" {
        return None;
    }
    let mo = MONTHS.iter().position(|m| *m == mo)? as u32 + 1;
    let mut cp = clock.split(':');
    let (h, mi, s) = (cp.next()?, cp.next()?, cp.next()?);
    from_parts(
        digits(y)? as i64,
        mo,
        digits(d)? as u32,
        digits(h)?,
        digits(mi)?,
        digits(s)?,
        0,
    )
}

/// Serde adapter: a [`Millis`] field stored as RFC 3339 text.
pub mod rfc3339 {
    use super::*;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(ms: &Millis, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_rfc3339(*ms))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Millis, D::Error> {
        let text = String::deserialize(d)?;
        parse_rfc3339(&text)
            .ok_or_else(|| D::Error::custom(format!("not an RFC 3339 UTC time: {text:?}")))
    }
}

/// `Option<Millis>` as an RFC 3339 string, or absent.
pub mod rfc3339_opt {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(ms: &Option<Millis>, s: S) -> Result<S::Ok, S::Error> {
        match ms {
            Some(ms) => rfc3339::serialize(ms, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Millis>, D::Error> {
        rfc3339::deserialize(d).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GitHub's REST API documents its times as ISO 8601, with offsets in its examples
    /// (`2019-08-08T08:00:00-07:00`) and any fraction: all of them read as the same instant.
    #[test]
    fn github_times_read_with_offsets_and_fractions() {
        let utc = parse_rfc3339("2019-08-08T15:00:00Z").unwrap();
        for text in [
            "2019-08-08T15:00:00Z",
            "2019-08-08T08:00:00-07:00",
            "2019-08-08T17:30:00+02:30",
            "2019-08-08T08:00:00.000-07:00",
            "2019-08-08T15:00:00.0004Z",
            "2019-08-08T15:00:00+00:00",
        ] {
            assert_eq!(parse_github_time(text), Some(utc), "{text}");
        }
        assert_eq!(
            parse_github_time("2019-08-08T15:00:00.123456789Z"),
            Some(utc + 123)
        );
        for bad in [
            "",
            "2019-08-08T15:00:00",
            "2019-08-08T15:00:00.Z",
            "2019-08-08T15:00:00-7:00",
            "2019-08-08T15:00:00+24:00",
            "2019-08-08 15:00:00Z",
            "1970-01-01T00:00:00+00:01",
        ] {
            assert_eq!(parse_github_time(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn formats_and_parses_round_trip() {
        for ms in [
            0,
            1_000,
            951_782_400_000,
            1_795_999_999_999,
            1_796_012_098_123,
            4_102_444_800_000,
        ] {
            assert_eq!(parse_rfc3339(&format_rfc3339(ms)), Some(ms), "{ms}");
        }
        assert_eq!(
            format_rfc3339(1_796_012_098_123),
            "2026-11-30T04:14:58.123Z"
        );
        assert_eq!(format_rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn every_time_written_reads_back() {
        assert_eq!(format_rfc3339(LATEST), "9999-12-31T23:59:59.999Z");
        assert_eq!(parse_rfc3339(&format_rfc3339(LATEST)), Some(LATEST));
        // Past the four-digit years: written as the latest time, still readable (a regression
        // case of the engine fuzz target: a lease computed from a far-off clock).
        for ms in [LATEST + 1, 6_941_432_089_828_000, u64::MAX] {
            assert_eq!(parse_rfc3339(&format_rfc3339(ms)), Some(LATEST), "{ms}");
        }
    }

    #[test]
    fn rejects_what_it_did_not_write() {
        for bad in [
            "",
            "2026-11-30",
            "2026-11-30T02:34:58",
            "2026-02-30T00:00:00Z",
            "2026-11-30T24:00:00Z",
            "2026-11-30T02:34:58+01:00",
            "2026-11-30T02:34:58.1234Z",
            "+2026-11-30T02:34:58Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        assert_eq!(
            parse_rfc3339("2026-11-30T02:34:58Z"),
            parse_rfc3339("2026-11-30T02:34:58.000Z")
        );
        assert_eq!(parse_rfc3339("2026-11-30T02:34:58.5Z").unwrap() % 1000, 500);
    }

    #[test]
    fn http_dates() {
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777_000)
        );
        assert_eq!(
            parse_http_date("Mon, 30 Nov 2026 02:34:58 GMT"),
            parse_rfc3339("2026-11-30T02:34:58Z")
        );
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), None);
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 UTC"), None);
    }
}
