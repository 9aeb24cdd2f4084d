//! Time rules: TTL syntax, expiry, the 8-hour ceiling, staleness and the
//! timestamp format of the registry. Pure: every decision takes `now`.

use chrono::{DateTime, Duration, FixedOffset, Local, NaiveDateTime, TimeZone};

/// The default TTL when none is given: the spec's short session.
pub const DEFAULT_TTL: Duration = Duration::hours(2);
/// No claim lives longer than this after it was opened.
pub const MAX_AGE: Duration = Duration::hours(8);
/// The reason written in the stale table by the watchdog.
pub const STALE_REASON: &str = "TTL expiré sans fermeture";
/// The reason written when a claim outlived the 8-hour ceiling.
pub const STALE_REASON_MAX: &str = "TTL expiré sans fermeture (8h maximum atteint)";

/// The shortest TTL: one minute, the registry's precision.
pub const MIN_TTL: Duration = Duration::minutes(1);

/// A TTL the user asked for was not understood or is out of its range
/// ([`MIN_TTL`] to [`MAX_AGE`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TtlError {
    /// Not a duration.
    #[error("`{0}` is not a duration: use 2h, 90m, 1h30m or short, deep, long")]
    Syntax(String),
    /// Zero or negative.
    #[error("a TTL must be longer than zero: use one from 1m to 8h")]
    Zero,
    /// More than 8 hours (however many more: the figure is never built).
    #[error("`{0}` is longer than the 8h maximum: use a TTL from 1m to 8h")]
    TooLong(String),
}

/// Parses `2h`, `90m`, `1h30m`, `45min`, or the names `short` (2h), `deep`
/// (4h) and `long` (8h). The minutes are counted in checked whole numbers
/// and held to the range before a [`Duration`] is made of them: no figure,
/// however long, panics.
pub fn parse_ttl(raw: &str) -> Result<Duration, TtlError> {
    let s = raw.trim().to_ascii_lowercase();
    let named = match s.as_str() {
        "short" => Some(2),
        "deep" => Some(4),
        "long" => Some(8),
        _ => None,
    };
    if let Some(h) = named {
        return Ok(Duration::hours(h));
    }
    let mut total: i64 = 0;
    let mut digits = String::new();
    let mut rest = s.as_str();
    let mut any = false;
    while !rest.is_empty() {
        let c = rest.chars().next().unwrap_or(' ');
        if c.is_ascii_digit() {
            digits.push(c);
            rest = &rest[1..];
            continue;
        }
        let unit_len = rest
            .find(|ch: char| ch.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = rest[..unit_len].trim();
        rest = &rest[unit_len..];
        let per: i64 = match unit {
            "h" | "hr" | "hour" | "hours" => 60,
            "m" | "min" | "mins" | "minute" | "minutes" => 1,
            _ => return Err(TtlError::Syntax(raw.to_string())),
        };
        if digits.is_empty() {
            return Err(TtlError::Syntax(raw.to_string()));
        }
        // Digits only: a figure that does not parse is one too big for any
        // number, and so for the range.
        let minutes = digits
            .parse::<i64>()
            .ok()
            .and_then(|n| n.checked_mul(per))
            .ok_or_else(|| TtlError::TooLong(raw.to_string()))?;
        digits.clear();
        total = total
            .checked_add(minutes)
            .ok_or_else(|| TtlError::TooLong(raw.to_string()))?;
        any = true;
    }
    if !digits.is_empty() || !any {
        return Err(TtlError::Syntax(raw.to_string()));
    }
    if total <= 0 {
        return Err(TtlError::Zero);
    }
    if total > MAX_AGE.num_minutes() {
        return Err(TtlError::TooLong(raw.to_string()));
    }
    Ok(Duration::minutes(total))
}

/// Writes a duration for people: `2h`, `1h30m`, `45m`.
pub fn format_duration(d: Duration) -> String {
    let mins = d.num_minutes().abs();
    let (h, m) = (mins / 60, mins % 60);
    match (h, m) {
        (0, m) => format!("{m}m"),
        (h, 0) => format!("{h}h"),
        (h, m) => format!("{h}h{m:02}m"),
    }
}

/// `t + d`, or `t` itself when that would pass the last instant chrono
/// holds: time arithmetic never panics, whatever a time or a duration came
/// from. (Registry times have four-digit years, [`parse_ts`], so the
/// hours added here never reach that end.)
pub fn plus(t: DateTime<FixedOffset>, d: Duration) -> DateTime<FixedOffset> {
    t.checked_add_signed(d).unwrap_or(t)
}

/// The 8h ceiling of a claim opened at `opened`.
fn ceiling(opened: DateTime<FixedOffset>) -> DateTime<FixedOffset> {
    plus(opened, MAX_AGE)
}

/// The expiry of a claim opened at `opened` with `ttl`, held under the ceiling.
pub fn expiry(opened: DateTime<FixedOffset>, ttl: Duration) -> DateTime<FixedOffset> {
    plus(opened, ttl.min(MAX_AGE))
}

/// The expiry after a renewal at `now`: `now + ttl`, never past 8h after opening.
pub fn renewed_expiry(
    opened: DateTime<FixedOffset>,
    now: DateTime<FixedOffset>,
    ttl: Duration,
) -> DateTime<FixedOffset> {
    plus(now, ttl).min(ceiling(opened))
}

/// Whether an active claim must move to the stale table at `now`, and why.
pub fn stale_reason(
    opened: DateTime<FixedOffset>,
    expires: DateTime<FixedOffset>,
    now: DateTime<FixedOffset>,
) -> Option<&'static str> {
    // The ceiling is named only for a claim that reached it: one that
    // lasted 8h, or whose expiry was pushed past them by hand. A short
    // claim swept late is just expired.
    let ceiling = ceiling(opened);
    if now < expires.min(ceiling) {
        None
    } else if expires >= ceiling {
        Some(STALE_REASON_MAX)
    } else {
        Some(STALE_REASON)
    }
}

/// When a claim stops being active: its expiry, or 8h after its opening if
/// that comes first (an expiry pushed past the maximum by hand).
pub fn end(opened: DateTime<FixedOffset>, expires: DateTime<FixedOffset>) -> DateTime<FixedOffset> {
    expires.min(ceiling(opened))
}

/// A claim's time for people, counted to its [`end`]: `1h12m left`,
/// `overdue 35m`; one held to the 8h maximum says so (`8h maximum
/// reached`, `overdue 5m (8h maximum)`) rather than the time to an expiry
/// that no longer counts.
pub fn claim_time(
    opened: DateTime<FixedOffset>,
    expires: DateTime<FixedOffset>,
    now: DateTime<FixedOffset>,
) -> String {
    let end = end(opened, expires);
    if end == expires || now < end {
        return time_left(end, now);
    }
    if now - end < Duration::minutes(1) {
        "8h maximum reached".to_string()
    } else {
        format!("{} (8h maximum)", time_left(end, now))
    }
}

/// `1h12m left`, `overdue 35m`; a long overdue figure is capped to days
/// (`overdue 1d4h`, `overdue 3d`).
pub fn time_left(expires: DateTime<FixedOffset>, now: DateTime<FixedOffset>) -> String {
    let d = expires - now;
    if d > Duration::zero() {
        format!("{} left", format_duration(d))
    } else {
        format!("overdue {}", format_rough(d))
    }
}

/// A duration for people, rougher past a day: `35m`, `5h20m`, `1d4h`, `3d`.
pub fn format_rough(d: Duration) -> String {
    let hours = d.num_hours().abs();
    match hours {
        0..24 => format_duration(d),
        24..48 => match hours % 24 {
            0 => "1d".into(),
            h => format!("1d{h}h"),
        },
        _ => format!("{}d", hours / 24),
    }
}

/// The registry's timestamp format: `2026-03-14 09:30 +01:00`.
pub fn format_ts(t: DateTime<FixedOffset>) -> String {
    t.format("%Y-%m-%d %H:%M %:z").to_string()
}

/// Reads a registry timestamp. With an offset (`+01:00`, `+0100`, `Z`), it is
/// exact; without one, it is read in the local time zone `local`. Years
/// have four digits, as bsi writes them: a year chrono could read at the
/// very end of its range (`+262142-12-31`) is not a time, so no expiry or
/// ceiling counted from it can run past what chrono holds.
pub fn parse_ts<Tz: TimeZone>(raw: &str, local: &Tz) -> Option<DateTime<FixedOffset>> {
    use chrono::Datelike;
    parse_any_ts(raw, local).filter(|t| (1..=9999).contains(&t.year()))
}

fn parse_any_ts<Tz: TimeZone>(raw: &str, local: &Tz) -> Option<DateTime<FixedOffset>> {
    let s = raw.trim();
    if let Some(t) = parse_canonical(s) {
        return Some(t);
    }
    for fmt in [
        "%Y-%m-%d %H:%M %:z",
        "%Y-%m-%d %H:%M %z",
        "%Y-%m-%dT%H:%M%:z",
    ] {
        if let Ok(t) = DateTime::parse_from_str(s, fmt) {
            return Some(t);
        }
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t);
    }
    let naive = s.strip_suffix('Z').map(str::trim_end);
    for fmt in ["%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S"] {
        if let Some(n) = naive
            && let Ok(t) = NaiveDateTime::parse_from_str(n, fmt)
        {
            return Some(t.and_utc().fixed_offset());
        }
        if let Ok(t) = NaiveDateTime::parse_from_str(s, fmt) {
            return local
                .from_local_datetime(&t)
                .earliest()
                .map(|l| l.fixed_offset());
        }
    }
    None
}

/// The form bsi writes, `2026-03-14 09:30 +01:00`, read without a format
/// string: every row of the registry holds two, and chrono's general parser
/// costs more than the rest of reading a row. `None` for any other form.
fn parse_canonical(s: &str) -> Option<DateTime<FixedOffset>> {
    let b = s.as_bytes();
    if b.len() != 23
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b' '
        || b[13] != b':'
        || b[16] != b' '
        || b[20] != b':'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        b[r].iter().try_fold(0u32, |acc, &c| {
            c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
        })
    };
    let sign = match b[17] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let offset = sign * (num(18..20)? * 3600 + num(21..23)? * 60) as i32;
    let date = chrono::NaiveDate::from_ymd_opt(num(0..4)? as i32, num(5..7)?, num(8..10)?)?;
    let naive = date.and_hms_opt(num(11..13)?, num(14..16)?, 0)?;
    FixedOffset::east_opt(offset)?
        .from_local_datetime(&naive)
        .single()
}

/// Parses a timestamp in the machine's local zone.
pub fn parse_ts_local(raw: &str) -> Option<DateTime<FixedOffset>> {
    parse_ts(raw, &Local)
}

/// Truncates to the minute, the registry's precision.
pub fn to_minute(t: DateTime<FixedOffset>) -> DateTime<FixedOffset> {
    use chrono::Timelike;
    t.with_second(0)
        .and_then(|t| t.with_nanosecond(0))
        .unwrap_or(t)
}

/// A time in the reader's zone (the zone of `now`), with the zone shown:
/// `2026-03-14 11:30 +00:00`. The registry keeps the writer's offset; a
/// reader elsewhere sees the same instant in its own zone.
pub fn local_ts(t: DateTime<FixedOffset>, now: DateTime<FixedOffset>) -> String {
    format_ts(t.with_timezone(now.offset()))
}

/// [`local_ts`] in this machine's zone, for a message written without a
/// `now` at hand.
pub fn local_zone_ts(t: DateTime<FixedOffset>) -> String {
    format_ts(t.with_timezone(&chrono::Local).fixed_offset())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canonical_form_reads_as_chrono_reads_it() {
        for raw in [
            "2026-03-14 09:30 +00:00",
            "2026-03-14 09:30 +01:00",
            "1999-12-31 23:59 -05:30",
            "2024-02-29 00:00 +14:00",
        ] {
            assert_eq!(
                parse_canonical(raw),
                DateTime::parse_from_str(raw, "%Y-%m-%d %H:%M %:z").ok(),
                "{raw}"
            );
        }
        for bad in [
            "2026-02-30 09:30 +00:00",
            "2026-03-14 24:30 +00:00",
            "2026-03-14 09:30 x00:00",
            "2026-03-14 09:3a +00:00",
            "2026-03-14T09:30 +00:00",
        ] {
            assert_eq!(parse_canonical(bad), None, "{bad}");
        }
    }
    use chrono::Utc;

    fn t(s: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(s).expect("test timestamp")
    }

    #[test]
    fn ttl_syntax() {
        assert_eq!(parse_ttl("2h"), Ok(Duration::hours(2)));
        assert_eq!(parse_ttl("90m"), Ok(Duration::minutes(90)));
        assert_eq!(parse_ttl("1h30m"), Ok(Duration::minutes(90)));
        assert_eq!(parse_ttl("deep"), Ok(Duration::hours(4)));
        assert_eq!(parse_ttl("LONG"), Ok(Duration::hours(8)));
        assert_eq!(parse_ttl("8h"), Ok(Duration::hours(8)));
        let t = |h: i64, m: i64| {
            DateTime::parse_from_rfc3339("2026-03-14T09:30:00Z").expect("time")
                + Duration::hours(h)
                + Duration::minutes(m)
        };
        // An expiry pushed a day on by hand counts only to the 8h maximum.
        assert_eq!(claim_time(t(0, 0), t(26, 0), t(7, 0)), "1h left");
        assert_eq!(claim_time(t(0, 0), t(26, 0), t(8, 0)), "8h maximum reached");
        assert_eq!(
            claim_time(t(0, 0), t(26, 0), t(8, 5)),
            "overdue 5m (8h maximum)"
        );
        assert_eq!(claim_time(t(0, 0), t(2, 0), t(2, 5)), "overdue 5m");
        assert!(matches!(parse_ttl("8h1m"), Err(TtlError::TooLong(_))));
        assert!(matches!(parse_ttl("0m"), Err(TtlError::Zero)));
        assert!(matches!(parse_ttl("2"), Err(TtlError::Syntax(_))));
        assert!(matches!(parse_ttl("h"), Err(TtlError::Syntax(_))));
        assert!(matches!(parse_ttl("2d"), Err(TtlError::Syntax(_))));
        // Figures past every bound are refused by the range, never panic.
        for huge in [
            "99999999999999999999h",
            "2562047788016h",
            "9999999999999999h",
            "153722867280912930m",
            "9223372036854775807m",
            "9223372036854775807h",
            "8h9223372036854775807m",
            "1h99999999999999999999999999999m",
        ] {
            assert_eq!(
                parse_ttl(huge),
                Err(TtlError::TooLong(huge.into())),
                "{huge}"
            );
        }
        let e = parse_ttl("2562047788016h").expect_err("too long");
        assert!(e.to_string().contains("from 1m to 8h"), "{e}");
        assert!(matches!(parse_ttl("0h0m"), Err(TtlError::Zero)));
    }

    #[test]
    fn staleness_and_ceiling() {
        let o = t("2026-03-14T09:00:00+01:00");
        let e = expiry(o, Duration::hours(2));
        assert_eq!(stale_reason(o, e, t("2026-03-14T10:59:00+01:00")), None);
        assert_eq!(
            stale_reason(o, e, t("2026-03-14T11:00:00+01:00")),
            Some(STALE_REASON)
        );
        // A hand-edited expiry past 8h does not save the claim.
        let far = o + Duration::hours(30);
        assert_eq!(
            stale_reason(o, far, t("2026-03-14T17:00:00+01:00")),
            Some(STALE_REASON_MAX)
        );
        // A 2h claim swept a day later is expired, not at the ceiling.
        assert_eq!(
            stale_reason(o, e, t("2026-03-15T17:00:00+01:00")),
            Some(STALE_REASON)
        );
        let full = expiry(o, MAX_AGE);
        assert_eq!(
            stale_reason(o, full, t("2026-03-14T17:00:00+01:00")),
            Some(STALE_REASON_MAX)
        );
        let r = renewed_expiry(o, t("2026-03-14T16:00:00+01:00"), Duration::hours(2));
        assert_eq!(r, o + MAX_AGE);
        // At the last instant chrono holds, arithmetic stops there.
        let end_of_time = DateTime::<Utc>::MAX_UTC.fixed_offset();
        assert_eq!(plus(end_of_time, MAX_AGE), end_of_time);
        assert_eq!(expiry(end_of_time, MAX_AGE), end_of_time);
        assert!(stale_reason(end_of_time, end_of_time, end_of_time).is_some());
    }

    #[test]
    fn timestamps() {
        let x = t("2026-03-14T09:30:00+01:00");
        assert_eq!(format_ts(x), "2026-03-14 09:30 +01:00");
        assert_eq!(parse_ts(&format_ts(x), &Utc), Some(x));
        assert_eq!(
            parse_ts("2026-03-14 09:30", &Utc),
            Some(t("2026-03-14T09:30:00Z"))
        );
        assert_eq!(parse_ts("2026-02-30 09:30 +00:00", &Utc), None);
        // The end of chrono's range is not a registry time: no expiry
        // counted from it could be written.
        assert_eq!(parse_ts("+262142-12-31 23:59 +00:00", &Utc), None);
        assert_eq!(parse_ts("+10000-01-01 00:00 +00:00", &Utc), None);
        let last = parse_ts("9999-12-31 23:59 +14:00", &Utc).expect("year 9999");
        assert_eq!(expiry(last, MAX_AGE), last + MAX_AGE);
        assert_eq!(stale_reason(last, expiry(last, MAX_AGE), last), None);
        assert_eq!(time_left(x, x - Duration::minutes(72)), "1h12m left");
        assert_eq!(time_left(x, x + Duration::minutes(35)), "overdue 35m");
        assert_eq!(time_left(x, x + Duration::hours(23)), "overdue 23h");
        assert_eq!(time_left(x, x + Duration::hours(24)), "overdue 1d");
        assert_eq!(
            time_left(x, x + Duration::minutes(28 * 60 + 5)),
            "overdue 1d4h"
        );
        assert_eq!(
            time_left(x, x + Duration::minutes(6283 * 60 + 27)),
            "overdue 261d"
        );
    }
}
