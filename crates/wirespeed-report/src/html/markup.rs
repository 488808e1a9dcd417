//! Markup that cannot carry a file's text unescaped.
//!
//! Every string read from a results file is hostile until escaped (iperf3 had advisories in its
//! JSON handling). [`Markup`] only accepts literal markup as `&'static str`, so text built at
//! run time (a host name, a parameter, a verdict) can enter the page only through
//! [`Markup::text`], which escapes it for element content and quoted attributes alike. The one
//! exception is an SVG plot, and that only from this crate's plot functions (see [`Svg`]).

use std::fmt::Write as _;

use wirespeed_model::RateFormat;
use wirespeed_model::units::{format_seconds, group_digits, significant};

/// A piece of the page: literal markup and escaped text.
#[derive(Debug, Clone, Default)]
pub struct Markup(String);

impl Markup {
    /// Nothing yet.
    pub fn new() -> Markup {
        Markup(String::new())
    }

    /// Literal markup written in this crate's source.
    pub fn lit(&mut self, markup: &'static str) -> &mut Markup {
        self.0.push_str(markup);
        self
    }

    /// Text from anywhere, escaped.
    pub fn text(&mut self, text: &str) -> &mut Markup {
        escape_into(&mut self.0, text);
        self
    }

    /// A number (a section number, a count), which needs no escaping.
    pub fn int(&mut self, n: usize) -> &mut Markup {
        let _ = write!(self.0, "{n}");
        self
    }

    /// Appends markup built elsewhere (already escaped where it had to be).
    pub fn push(&mut self, other: &Markup) -> &mut Markup {
        self.0.push_str(&other.0);
        self
    }

    /// A plot drawn by this crate.
    pub fn svg(&mut self, svg: &Svg) -> &mut Markup {
        self.0.push_str(&svg.0);
        self
    }

    /// `<p class="note">text</p>`.
    pub fn note(&mut self, text: &str) -> &mut Markup {
        self.lit("<p class=\"note\">").text(text).lit("</p>\n")
    }

    /// `<h3>text</h3>`.
    pub fn heading(&mut self, text: &str) -> &mut Markup {
        self.lit("<h3>").text(text).lit("</h3>\n")
    }

    /// Nothing was written.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The page text.
    pub fn into_string(self) -> String {
        self.0
    }
}

/// An SVG document drawn by [`crate::plot`], whose text the plotting backend escapes.
#[derive(Debug, Clone)]
pub struct Svg(String);

impl Svg {
    /// Wraps a plot from [`crate::plot`]; only plot output may be passed here.
    pub(crate) fn from_plot(svg: String) -> Svg {
        // The backend writes width and height; the page scales plots to its column instead.
        Svg(svg.replacen("<svg ", "<svg class=\"plot\" ", 1))
    }
}

/// Escapes `&`, `<`, `>`, `"` and `'`: enough for element content and quoted attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    escape_into(&mut out, text);
    out
}

fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than tab and newline have no business in a page.
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

/// How a table cell is shown.
#[derive(Debug, Clone)]
pub enum Cell {
    /// Text, left-aligned.
    Text(String),
    /// A figure, right-aligned.
    Num(String),
    /// A verdict word, coloured by its tone.
    Tone(String, Tone),
    /// Markup built elsewhere (a nested table).
    Markup(Markup),
}

impl Cell {
    /// Text, escaped when drawn.
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    /// A figure, right-aligned.
    pub fn num(s: impl Into<String>) -> Cell {
        Cell::Num(s.into())
    }

    /// A figure or an empty cell.
    pub fn opt(s: Option<String>) -> Cell {
        Cell::Num(s.unwrap_or_default())
    }
}

/// Colours for verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Within, passed, matched.
    Good,
    /// Outside, failed, mismatched.
    Bad,
    /// Neither.
    Neutral,
}

impl Tone {
    fn class(self) -> &'static str {
        match self {
            Tone::Good => "good",
            Tone::Bad => "bad",
            Tone::Neutral => "neutral",
        }
    }
}

/// An HTML table with a header row.
#[derive(Debug, Clone, Default)]
pub struct HtmlTable {
    header: Vec<String>,
    rows: Vec<Vec<Cell>>,
}

impl HtmlTable {
    /// A table with this header row (none when empty).
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(header: I) -> HtmlTable {
        HtmlTable {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn row(&mut self, cells: Vec<Cell>) -> &mut HtmlTable {
        self.rows.push(cells);
        self
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Whether column `i` has something in some row.
    fn used(&self, i: usize) -> bool {
        self.rows.iter().any(|row| match row.get(i) {
            Some(Cell::Text(t) | Cell::Num(t) | Cell::Tone(t, _)) => !t.is_empty(),
            Some(Cell::Markup(m)) => !m.is_empty(),
            None => false,
        })
    }

    /// The table; a headed column empty in every row (UDP's loss on a TCP test) is left out.
    pub fn markup(&self) -> Markup {
        let shown: Vec<bool> = (0..self
            .header
            .len()
            .max(self.rows.iter().map(Vec::len).max().unwrap_or(0)))
            .map(|i| self.header.is_empty() || self.rows.is_empty() || self.used(i))
            .collect();
        let mut m = Markup::new();
        m.lit("<table>\n");
        if !self.header.is_empty() {
            m.lit("<thead><tr>");
            for (i, h) in self.header.iter().enumerate() {
                if shown[i] {
                    m.lit("<th>").text(h).lit("</th>");
                }
            }
            m.lit("</tr></thead>\n");
        }
        m.lit("<tbody>\n");
        for row in &self.rows {
            m.lit("<tr>");
            for (i, cell) in row.iter().enumerate() {
                if !shown[i] {
                    continue;
                }
                match cell {
                    Cell::Text(t) => m.lit("<td>").text(t).lit("</td>"),
                    Cell::Num(t) => m.lit("<td class=\"num\">").text(t).lit("</td>"),
                    Cell::Tone(t, tone) => m
                        .lit("<td class=\"")
                        .lit(tone.class())
                        .lit("\">")
                        .text(t)
                        .lit("</td>"),
                    Cell::Markup(inner) => m.lit("<td>").push(inner).lit("</td>"),
                };
            }
            m.lit("</tr>\n");
        }
        m.lit("</tbody></table>\n");
        m
    }
}

/// A number in four significant digits, or with thousands separators when it is a whole
/// number (counts, byte totals).
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    // Whole numbers, and anything from a thousand up (a 7-digit KiB/s), read best grouped.
    if (v.fract() == 0.0 || v.abs() >= 1000.0) && v.abs() < 1e15 {
        let grouped = group_digits(v.abs().round() as u64);
        return if v < 0.0 {
            format!("-{grouped}")
        } else {
            grouped
        };
    }
    significant(v, 4)
}

/// A rate in bits per second, in the decimal prefix that suits it.
pub fn rate(bits_per_second: f64) -> String {
    if bits_per_second.is_finite() {
        RateFormat::Adaptive.format(bits_per_second)
    } else {
        "-".into()
    }
}

/// A time in the unit that reads best, negative times included.
pub fn seconds(s: f64) -> String {
    if !s.is_finite() {
        "-".into()
    } else if s.abs() < 1e-12 {
        // Below a picosecond, either sign, is floating-point residue (a mean minus its
        // ideal), not time: `-0.00000001973 ns` is 0.
        "0 s".into()
    } else if s < 0.0 {
        format!("-{}", format_seconds(-s))
    } else {
        format_seconds(s)
    }
}

/// A value formatted by the unit its field name carries (`*_bits_per_second`, `*_seconds`,
/// `*_bytes`, `*_percent`, `*_ms`): the schemas put units in names, so the page can too.
pub fn by_unit(key: &str, v: f64) -> String {
    let key = key.to_ascii_lowercase();
    if !v.is_finite() {
        "-".into()
    } else if is_identifier(&key) && v.fract() == 0.0 && v.abs() < 1e15 {
        // A process id or a port names a thing; grouped as a count (`pid 7,979`) it misleads.
        format!("{v:.0}")
    } else if v == 0.0
        && let Some(unit) = time_unit(&key)
    {
        // Zero in the unit the field is counted in: `held_back_max_us` is `0 us`, not `0 s`.
        format!("0 {unit}")
    } else if key.ends_with("bits_per_second") {
        rate(v)
    } else if key.ends_with("bytes_per_second") {
        rate(v * 8.0)
    } else if key.ends_with("seconds") || key.ends_with("_s") {
        seconds(v)
    } else if key.ends_with("_ns") {
        seconds(v * 1e-9)
    } else if key.ends_with("_us") {
        seconds(v * 1e-6)
    } else if key.ends_with("_ms") || key.ends_with("rtt_ms") {
        format!("{} ms", significant(v, 4))
    } else if key.ends_with("percent") {
        format!("{} %", significant(v, 3))
    } else if key.ends_with("bytes") && v.fract() == 0.0 {
        format!("{} B", number(v))
    } else {
        number(v)
    }
}

/// Fields whose whole numbers name something (a process, a port, an index, a year) rather
/// than count it.
fn is_identifier(key: &str) -> bool {
    [
        "pid", "port", "id", "index", "year", "vlan", "ifindex", "cpu",
    ]
    .iter()
    .any(|name| key == *name || key.ends_with(&format!("_{name}")))
}

/// The time unit a field name ends in, as written after a figure.
fn time_unit(key: &str) -> Option<&'static str> {
    [
        ("seconds", "s"),
        ("_s", "s"),
        ("_ms", "ms"),
        ("_us", "us"),
        ("_ns", "ns"),
    ]
    .iter()
    .find(|(suffix, _)| key.ends_with(suffix))
    .map(|(_, unit)| *unit)
}
