// HQL standard library: dates and times.
//
// `Date` is an ISO 8601 calendar date in extended form, `YYYY-MM-DD`.
// `Timestamp` is an RFC 3339 `date-time`. Both check the calendar for real:
// the month exists, the day exists in that month, and February 29 exists
// only in leap years of the proleptic Gregorian calendar.
//
// The shape is checked with a regex before any number is read, so `int`
// never sees text it cannot parse and the `is_…` functions never raise on a
// String. Years 0000 to 9999 are accepted, as RFC 3339 allows.

/// True when `year` is a leap year in the Gregorian calendar: divisible by 4,
/// except century years, which are leap years only when divisible by 400.
/// example: is_leap_year(2024)
/// example: is_leap_year(2000)
/// example: not is_leap_year(1900)
/// example: not is_leap_year(2023)
fn is_leap_year(year: Int) -> Bool = (year % 4 == 0 and year % 100 != 0) or year % 400 == 0

/// The number of days in `month` (1 to 12) of `year`; 0 for a month that
/// does not exist.
/// example: days_in_month(2024, 2) == 29
/// example: days_in_month(2023, 2) == 28
/// example: days_in_month(2023, 4) == 30
/// example: days_in_month(2023, 12) == 31
/// example: days_in_month(2023, 13) == 0
fn days_in_month(year: Int, month: Int) -> Int =
    if month < 1 or month > 12 then 0
    else if month == 2 then if is_leap_year(year) then 29 else 28
    else if month in [4, 6, 9, 11] then 30
    else 31

/// True when `year`, `month` and `day` name a day that exists.
/// example: is_valid_ymd(2024, 2, 29)
/// example: not is_valid_ymd(2023, 2, 29)
/// example: not is_valid_ymd(2023, 6, 31)
/// example: not is_valid_ymd(2023, 1, 0)
fn is_valid_ymd(year: Int, month: Int, day: Int) -> Bool =
    day >= 1 and day <= days_in_month(year, month)

/// A calendar date in ISO 8601 extended form, `YYYY-MM-DD`, that exists:
/// month 01 to 12, day 01 to the last day of that month, February 29 only
/// in leap years. Exactly four year digits, two month and two day digits.
/// example: is_ok(validate("2024-02-29", Date))
/// example: is_err(validate("2023-02-29", Date))
/// example: is_err(validate("2023-02-30", Date))
/// example: is_err(validate("2024-2-9", Date))
type Date = String
    require calendar_date: is_date(self)

/// True when `s` is an existing calendar date written `YYYY-MM-DD`.
/// example: is_date("2024-02-29")
/// example: is_date("2000-02-29")
/// example: not is_date("1900-02-29")
/// example: not is_date("2023-02-29")
/// example: is_date("2023-02-28")
/// example: is_date("2023-01-31")
/// example: not is_date("2023-04-31")
/// example: not is_date("2023-06-31")
/// example: not is_date("2023-09-31")
/// example: not is_date("2023-11-31")
/// example: is_date("2023-12-31")
/// example: not is_date("2023-00-10")
/// example: not is_date("2023-13-10")
/// example: not is_date("2023-01-00")
/// example: not is_date("2023-01-32")
/// example: not is_date("2023-1-05")
/// example: not is_date("20230105")
/// example: not is_date("2023-01-05T00:00:00Z")
/// example: not is_date(" 2023-01-05")
/// example: not is_date("")
fn is_date(s: String) -> Bool =
    if matches(s, r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
    then is_valid_ymd(int(split(s, "-")[0]), int(split(s, "-")[1]), int(split(s, "-")[2]))
    else false

/// An RFC 3339 date-time such as `2024-02-29T13:45:00Z`: a valid `Date`, a
/// separator `T`, `t` or a space (RFC 3339 §5.6 note), `hh:mm:ss` with hour
/// 00 to 23, minute 00 to 59 and second 00 to 60 (60 for a leap second),
/// optional fractional seconds `.` followed by one or more digits, and a
/// time zone: `Z`, `z`, or an offset `+hh:mm` / `-hh:mm` (hour 00 to 23,
/// minute 00 to 59). The offset is required.
/// example: is_ok(validate("2024-02-29T13:45:00Z", Timestamp))
/// example: is_err(validate("2023-02-29T13:45:00Z", Timestamp))
/// example: is_err(validate("2024-02-29T13:45:00", Timestamp))
type Timestamp = String
    require date_time: is_timestamp(self)

/// True when `s` is an RFC 3339 date-time whose date exists (see `Timestamp`).
/// example: is_timestamp("2024-02-29T13:45:00Z")
/// example: is_timestamp("2024-02-29t13:45:00z")
/// example: is_timestamp("2024-02-29 13:45:00Z")
/// example: is_timestamp("2024-02-29T13:45:00.123456+05:30")
/// example: is_timestamp("2024-02-29T13:45:00.5-08:00")
/// example: is_timestamp("1985-04-12T23:20:50.52Z")
/// example: is_timestamp("1990-12-31T23:59:60Z")
/// example: is_timestamp("2024-01-01T00:00:00-00:00")
/// example: not is_timestamp("2023-02-29T13:45:00Z")
/// example: not is_timestamp("2024-02-29T24:00:00Z")
/// example: not is_timestamp("2024-02-29T13:60:00Z")
/// example: not is_timestamp("2024-02-29T13:45:61Z")
/// example: not is_timestamp("2024-02-29T13:45:00")
/// example: not is_timestamp("2024-02-29T13:45:00.Z")
/// example: not is_timestamp("2024-02-29T13:45Z")
/// example: not is_timestamp("2024-02-29T13:45:00+0530")
/// example: not is_timestamp("2024-02-29T13:45:00+24:00")
/// example: not is_timestamp("2024-02-29T13:45:00+05:60")
/// example: not is_timestamp("2024-02-29X13:45:00Z")
/// example: not is_timestamp("2024-02-29")
fn is_timestamp(s: String) -> Bool =
    if matches(s, r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$")
    then is_date(split(replace(lower(s), " ", "t"), "t")[0])
    else false
