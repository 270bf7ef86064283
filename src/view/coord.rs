//! Coordinate values of the dataset view: MARS values as they are, and the
//! times cfgrib builds from them (`spec/kerchunk.md` §2).

use serde_json::{json, Value as Json};

use crate::cbor::Value;

/// One coordinate value of an object.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
pub enum Coord {
    /// A float (sorts first, as Python's class names `float` < `int` < `str`).
    Float(f64),
    /// An integer.
    Int(i64),
    /// Anything else, as text.
    Text(String),
    /// An instant: seconds since 1970-01-01T00:00:00 (proleptic Gregorian).
    Time(i64),
    /// A duration in hours (MARS `step`).
    Span(i64),
}

impl Coord {
    /// The coordinate value of a metadata value.
    pub fn of(v: &Value) -> Coord {
        match v {
            Value::Float(f) => Coord::Float(*f),
            Value::Text(t) => Coord::Text(t.clone()),
            Value::Bool(b) => Coord::Text(if *b { "True" } else { "False" }.into()),
            _ => match v.as_i64() {
                Some(i) => Coord::Int(i),
                None => Coord::Text(v.to_json_value().to_string()),
            },
        }
    }

    /// The value as JSON: a time as ISO 8601 text (`2017-01-02T12:00:00`),
    /// a duration as its hours.
    pub fn to_json(&self) -> Json {
        match self {
            Coord::Float(f) => json!(f),
            Coord::Int(i) | Coord::Span(i) => json!(i),
            Coord::Text(t) => json!(t),
            Coord::Time(t) => json!(iso_time(*t)),
        }
    }
}

/// Seconds per hour: MARS `step` is in hours.
const HOUR: i64 = 3600;

/// The forecast reference time of MARS `date` (YYYYMMDD) and `time` (HHMM)
/// as seconds since 1970-01-01 (proleptic Gregorian), as cfgrib builds its
/// `time` coordinate; None unless both are integers naming a real date and
/// a time of day.
pub fn reference_time(date: i64, time: i64) -> Option<i64> {
    let (y, mo, d) = (date / 10000, date / 100 % 100, date % 100);
    let (h, mi) = (time / 100, time % 100);
    if !(1..=9999).contains(&y) || !(0..=23).contains(&h) || !(0..=59).contains(&mi) {
        return None;
    }
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) {
        return None;
    }
    Some(days_from_civil(y, mo, d) * 86400 + h * HOUR + mi * 60)
}

/// The forecast period of a MARS `step` in hours; None for anything but
/// an integer (a range such as `0-6`).
pub fn step_hours(step: &Value) -> Option<i64> {
    step.as_i64()
}

/// The valid time of reference time `t` (seconds since 1970) plus `step`
/// hours, saturating at the ends of `i64`.
pub fn valid_time(t: i64, step: i64) -> i64 {
    t.saturating_add(step.saturating_mul(HOUR))
}

/// The most `valid_time` values built for a dataset of fewer objects
/// (`spec/kerchunk.md` §2).
pub const MAX_VALID_TIMES: usize = 1 << 20;

/// cfgrib's `valid_time` in seconds since 1970: every reference time
/// (seconds) plus every step (hours), times first (row-major over
/// `(time, step)`). The times and steps may come from different variables
/// of a dataset of `objects` objects, so their product is not bounded by
/// the objects: None when it exceeds both `objects` and
/// [`MAX_VALID_TIMES`].
pub fn valid_times(times: &[i64], steps: &[i64], objects: usize) -> Option<Vec<i64>> {
    let n = times.len().checked_mul(steps.len())?;
    if n > objects.max(MAX_VALID_TIMES) {
        return None;
    }
    let all = times
        .iter()
        .flat_map(|t| steps.iter().map(move |&s| valid_time(*t, s)));
    Some(all.collect())
}

/// Seconds since 1970 as ISO 8601 text, `YYYY-MM-DDTHH:MM:SS`.
pub fn iso_time(t: i64) -> String {
    let (days, secs) = (t.div_euclid(86400), t.rem_euclid(86400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The proleptic Gregorian date of a day count from 1970-01-01 (H.
/// Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_times_are_unix_seconds() {
        assert_eq!(reference_time(19700101, 0), Some(0));
        assert_eq!(reference_time(20170102, 1200), Some(1_483_358_400));
        assert_eq!(reference_time(20000229, 2359), Some(951_868_740));
        assert_eq!(reference_time(20010229, 0), None);
        assert_eq!(reference_time(20170101, 2400), None);
        assert_eq!(reference_time(20170101, 1260), None);
    }

    #[test]
    fn valid_times_add_every_step_to_every_time() {
        assert_eq!(
            valid_times(&[0, 100], &[1, 2], 1),
            Some(vec![3600, 7200, 3700, 7300])
        );
        // Times of one variable and steps of another, each one object:
        // their product is more than the objects and the budget.
        let many: Vec<i64> = (0..1 << 11).collect();
        assert_eq!(valid_times(&many, &many, 2 << 11), None);
        let within = valid_times(&many, &many[..1 << 9], 1 << 20).map(|v| v.len());
        assert_eq!(within, Some(1 << 20));
        assert_eq!(
            valid_times(&many, &many, 1 << 22).map(|v| v.len()),
            Some(1 << 22)
        );
        assert_eq!(step_hours(&Value::Uint(6)), Some(6));
        assert_eq!(step_hours(&Value::Text("0-6".into())), None);
    }

    #[test]
    fn iso_times_round_trip_reference_times() {
        for (d, t, s) in [
            (19700101, 0, "1970-01-01T00:00:00"),
            (20170102, 1200, "2017-01-02T12:00:00"),
            (20000229, 2359, "2000-02-29T23:59:00"),
            (16000301, 30, "1600-03-01T00:30:00"),
        ] {
            assert_eq!(iso_time(reference_time(d, t).expect("a date")), s);
        }
    }
}
