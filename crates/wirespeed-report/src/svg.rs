//! Scatter plots with fitted lines as standalone SVG: the seed 001 figures (delay against packet
//! size, the least-squares line drawn through the points). Written by hand, no font or plotting
//! library needed; any browser shows the file.

use std::fmt::Write as _;

/// One series: points and, optionally, the line fitted to them.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// (x, y) points.
    pub points: Vec<(f64, f64)>,
    /// `y = intercept + slope x`, drawn across the series' x range.
    pub line: Option<(f64, f64)>,
}

const W: f64 = 720.0;
const H: f64 = 440.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// Round tick steps (1, 2, 5 x 10^k) giving about `n` ticks over `span`.
fn tick_step(span: f64, n: f64) -> f64 {
    if span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / n;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f < 1.5 {
        1.0
    } else if f < 3.5 {
        2.0
    } else if f < 7.5 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// An SVG document plotting `series` with axis labels and a legend.
pub fn plot(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let pts = series.iter().flat_map(|s| s.points.iter().copied());
    let (mut x0, mut x1, mut y0, mut y1) =
        (f64::INFINITY, f64::NEG_INFINITY, 0.0f64, f64::NEG_INFINITY);
    for (x, y) in pts.filter(|(x, y)| x.is_finite() && y.is_finite()) {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        (x0, x1, y1) = (0.0, 1.0, 1.0);
    }
    x0 = x0.min(0.0);
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    let (xs, ys) = (tick_step(x1 - x0, 8.0), tick_step(y1 - y0, 6.0));
    x1 = (x1 / xs).ceil() * xs;
    y1 = (y1 / ys).ceil() * ys;
    y0 = (y0 / ys).floor() * ys;
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * pw;
    let py = |y: f64| TOP + ph - (y - y0) / (y1 - y0) * ph;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
        LEFT + pw / 2.0,
        esc(title)
    );
    let mut t = x0;
    while t <= x1 + xs / 2.0 {
        let x = px(t);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#eee"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + ph,
            TOP + ph + 16.0,
            fmt_tick(t)
        );
        t += xs;
    }
    let mut t = y0;
    while t <= y1 + ys / 2.0 {
        let y = py(t);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 6.0,
            y + 4.0,
            fmt_tick(t)
        );
        t += ys;
    }
    let _ = writeln!(
        s,
        r#"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        LEFT + pw / 2.0,
        H - 18.0,
        esc(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(20 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        TOP + ph / 2.0,
        esc(y_label)
    );
    for (i, ser) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        for &(x, y) in ser
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
        {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"/>"#,
                px(x),
                py(y)
            );
        }
        if let Some((a, b)) = ser.line {
            let lo = ser.points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
            let hi = ser
                .points
                .iter()
                .map(|p| p.0)
                .fold(f64::NEG_INFINITY, f64::max);
            if lo.is_finite() && hi.is_finite() {
                let _ = writeln!(
                    s,
                    r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{c}" stroke-width="1.5"/>"#,
                    px(lo),
                    py(a + b * lo),
                    px(hi),
                    py(a + b * hi)
                );
            }
        }
        let ly = TOP + 14.0 + 18.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{c}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            LEFT + pw + 14.0,
            ly - 4.0,
            LEFT + pw + 24.0,
            ly,
            esc(&ser.name)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn fmt_tick(v: f64) -> String {
    let t = format!("{v:.6}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    if t == "-0" { "0".into() } else { t.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plot_has_points_lines_and_legend() {
        let svg = plot(
            "t",
            "bytes",
            "ms",
            &[Series {
                name: "hop 1 <a>".into(),
                points: vec![(0.0, 1.0), (100.0, 2.0), (200.0, f64::NAN)],
                line: Some((1.0, 0.01)),
            }],
        );
        assert!(svg.starts_with("<svg"));
        assert_eq!(
            svg.matches("<circle").count(),
            3,
            "two points and the legend mark"
        );
        assert!(svg.contains("stroke-width=\"1.5\""));
        assert!(svg.contains("hop 1 &lt;a&gt;"));
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(1000.0, 8.0), 100.0);
        assert_eq!(tick_step(0.03, 6.0), 0.005);
        assert_eq!(fmt_tick(0.0050000001), "0.005");
    }
}
