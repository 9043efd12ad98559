//! What a render is given besides the conversation: the generation prompt, thinking, extra
//! variables, the date, and the limits.

/// Bounds on one render. A template that reaches one gets
/// [`Error::Limit`](crate::Error::Limit) naming it, never a hang or a crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Instructions the engine may run (minijinja's fuel); the largest real template uses
    /// well under a million on a long conversation.
    pub fuel: u64,
    /// Bytes of rendered prompt.
    pub output_bytes: u64,
    /// Depth of nested macro calls and expressions (at most minijinja's own 500).
    pub recursion: usize,
    /// Bytes of template source.
    pub template_bytes: u64,
    /// Bytes of text a render may make by formatting values: printing or `~` of a list,
    /// `join`, `format`, `string`, `tojson`, string methods. A list can hold one long string
    /// many times over at little cost, but its text is the sum of its items: this is paid as
    /// it is written, and the render stops when it is spent.
    pub format_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            fuel: 5_000_000,
            output_bytes: 64 << 20,
            recursion: 200,
            template_bytes: 4 << 20,
            format_bytes: 128 << 20,
        }
    }
}

/// Options of one render.
///
/// ```
/// let mut opts = gguf_chat::RenderOptions::new();
/// opts.enable_thinking = Some(false);
/// opts.extra.insert("reasoning_effort".into(), "low".into());
/// assert!(opts.add_generation_prompt);
/// ```
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// End with the prompt that starts the assistant's reply (`add_generation_prompt`).
    pub add_generation_prompt: bool,
    /// `enable_thinking` as llama.cpp passes it; `None` is llama.cpp's default, `true` (the
    /// variable is always set, as llama.cpp sets it).
    pub enable_thinking: Option<bool>,
    /// Extra template variables (llama-server's `chat_template_kwargs`); they replace the
    /// variables of the same name.
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// The time `strftime_now` formats and the `datetime`/`date_string` variables show, in
    /// seconds since 1970 (UTC).
    pub now: i64,
    /// The bounds of the render.
    pub limits: Limits,
}

impl RenderOptions {
    /// A generation prompt, no extra variables, default limits, and as the date today (UTC
    /// midnight), or the day of `SOURCE_DATE_EPOCH` when that is set (reproducible output).
    pub fn new() -> RenderOptions {
        let secs = std::env::var("SOURCE_DATE_EPOCH")
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs() as i64)
            });
        RenderOptions {
            add_generation_prompt: true,
            enable_thinking: None,
            extra: serde_json::Map::new(),
            now: secs.div_euclid(86_400) * 86_400,
            limits: Limits::default(),
        }
    }

    /// The same options with `now` at midnight (UTC) of a calendar day.
    ///
    /// ```
    /// let opts = gguf_chat::RenderOptions::new().on_day(2024, 7, 26);
    /// assert_eq!(opts.now, 1_721_952_000);
    /// ```
    pub fn on_day(mut self, year: i64, month: u32, day: u32) -> RenderOptions {
        self.now = days_from_civil(year, month, day) * 86_400;
        self
    }
}

impl Default for RenderOptions {
    fn default() -> RenderOptions {
        RenderOptions::new()
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The calendar date of a day number.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// C's `strftime` in the C locale, for UTC: the conversions templates use (`%d %b %Y`,
/// `%Y-%m-%d`, `%A`, `%H:%M`, ...). Others are written out as they are.
pub(crate) fn strftime(format: &str, secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (tod / 3600, tod / 60 % 60, tod % 60);
    let wday = (days + 4).rem_euclid(7) as usize;
    let yday = days - days_from_civil(y, 1, 1) + 1;
    let month = MONTHS[(m - 1) as usize];
    let mut out = String::new();
    let mut it = format.chars();
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(k) = it.next() else {
            out.push('%');
            break;
        };
        let s = match k {
            'Y' => y.to_string(),
            'y' => format!("{:02}", y.rem_euclid(100)),
            'C' => format!("{:02}", y.div_euclid(100)),
            'm' => format!("{m:02}"),
            'd' => format!("{d:02}"),
            'e' => format!("{d:2}"),
            'b' | 'h' => month[..3].to_string(),
            'B' => month.to_string(),
            'a' => DAYS[wday][..3].to_string(),
            'A' => DAYS[wday].to_string(),
            'u' => (if wday == 0 { 7 } else { wday }).to_string(),
            'w' => wday.to_string(),
            'j' => format!("{yday:03}"),
            'H' => format!("{hh:02}"),
            'I' => format!("{:02}", if hh % 12 == 0 { 12 } else { hh % 12 }),
            'M' => format!("{mm:02}"),
            'S' => format!("{ss:02}"),
            'p' => (if hh < 12 { "AM" } else { "PM" }).to_string(),
            'F' => format!("{y}-{m:02}-{d:02}"),
            'D' => format!("{m:02}/{d:02}/{:02}", y.rem_euclid(100)),
            'T' => format!("{hh:02}:{mm:02}:{ss:02}"),
            'R' => format!("{hh:02}:{mm:02}"),
            'Z' => "UTC".to_string(),
            'z' => "+0000".to_string(),
            'n' => "\n".to_string(),
            't' => "\t".to_string(),
            '%' => "%".to_string(),
            other => format!("%{other}"),
        };
        out.push_str(&s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        let t = days_from_civil(2024, 7, 26) * 86_400 + 13 * 3600 + 5 * 60;
        assert_eq!(strftime("%d %b %Y", t), "26 Jul 2024");
        assert_eq!(
            strftime("%A %B %e %H:%M %p %j", t),
            "Friday July 26 13:05 PM 208"
        );
        assert_eq!(civil_from_days(days_from_civil(2000, 2, 29)), (2000, 2, 29));
        assert_eq!(strftime("%F", 0), "1970-01-01");
    }
}
