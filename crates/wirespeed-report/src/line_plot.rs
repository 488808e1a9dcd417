//! Line plots as standalone SVG: one curve per series, linear axes with round ticks.
//!
//! Written by hand (a few hundred bytes of markup per curve) so that a figure needs no font
//! library and no drawing crate: the text is SVG `<text>`, laid out by whatever shows it. The
//! layout is that of the figures of seed 000 (§3, figures 3-3 to 3-12): x the number of hosts,
//! one labelled curve per packet size.

use std::fmt::Write as _;

/// A plot of named series of `(x, y)` points.
#[derive(Debug, Clone, Default)]
pub struct LinePlot {
    /// Title above the plot.
    pub title: String,
    /// Label of the x axis.
    pub x_label: String,
    /// Label of the y axis.
    pub y_label: String,
    /// `(name, points)`; points with a non-finite coordinate are skipped.
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 110.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;
const COLOURS: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// A round tick step giving about `n` intervals over `span`.
fn tick_step(span: f64, n: f64) -> f64 {
    let raw = (span / n).max(f64::MIN_POSITIVE);
    let magnitude = 10f64.powf(raw.log10().floor());
    let fraction = raw / magnitude;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn label(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

impl LinePlot {
    /// The plot as an SVG document.
    pub fn to_svg(&self) -> String {
        let points = || {
            self.series
                .iter()
                .flat_map(|(_, p)| p.iter())
                .filter(|(x, y)| x.is_finite() && y.is_finite())
        };
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, 0.0f64, f64::MIN);
        for &(x, y) in points() {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if x0 > x1 {
            (x0, x1, y1) = (0.0, 1.0, 1.0);
        }
        if x1 == x0 {
            x1 = x0 + 1.0;
        }
        if y1 <= y0 {
            y1 = y0 + 1.0;
        }
        let ystep = tick_step(y1 - y0, 5.0);
        let (y0, y1) = ((y0 / ystep).floor() * ystep, (y1 / ystep).ceil() * ystep);
        let xstep = tick_step(x1 - x0, 8.0).max(1.0);
        let plot_w = WIDTH - LEFT - RIGHT;
        let plot_h = HEIGHT - TOP - BOTTOM;
        let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * plot_w;
        let sy = |y: f64| TOP + plot_h - (y - y0) / (y1 - y0) * plot_h;

        let mut svg = String::new();
        let _ = writeln!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(
            svg,
            r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
        );
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
            LEFT + plot_w / 2.0,
            escape(&self.title)
        );
        // Grid and ticks.
        let mut y = y0;
        while y <= y1 + ystep * 1e-9 {
            let py = sy(y);
            let _ = writeln!(
                svg,
                r##"<line x1="{LEFT}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + plot_w,
                LEFT - 6.0,
                py + 4.0,
                label(y)
            );
            y += ystep;
        }
        let mut x = (x0 / xstep).ceil() * xstep;
        while x <= x1 + xstep * 1e-9 {
            let px = sx(x);
            let _ = writeln!(
                svg,
                r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}" stroke="#eee"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                TOP + plot_h,
                TOP + plot_h + 16.0,
                label(x)
            );
            x += xstep;
        }
        let _ = writeln!(
            svg,
            r#"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="black"/>"#
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + plot_w / 2.0,
            HEIGHT - 12.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            svg,
            r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            TOP + plot_h / 2.0,
            escape(&self.y_label)
        );
        // Curves, each labelled at its right end and in the legend.
        for (i, (name, pts)) in self.series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let path: Vec<String> = pts
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
                .collect();
            if !path.is_empty() {
                let _ = writeln!(
                    svg,
                    r#"<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{}"/>"#,
                    path.join(" ")
                );
            }
            let ly = TOP + 10.0 + 16.0 * i as f64;
            let lx = LEFT + plot_w + 10.0;
            let _ = writeln!(
                svg,
                r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
                lx + 18.0,
                lx + 22.0,
                ly + 4.0,
                escape(name)
            );
        }
        svg.push_str("</svg>\n");
        svg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plot_has_its_curves_ticks_and_labels() {
        let plot = LinePlot {
            title: "Total bit rate".into(),
            x_label: "hosts".into(),
            y_label: "Mbit/s".into(),
            series: vec![
                ("64".into(), vec![(1.0, 4.7), (2.0, 9.3), (24.0, 8.0)]),
                ("1536 & up".into(), vec![(1.0, 9.4), (24.0, f64::NAN)]),
            ],
        };
        let svg = plot.to_svg();
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("Total bit rate") && svg.contains("1536 &amp; up"));
        assert!(svg.contains(">10<"), "a y tick at 10");
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(10.0, 5.0), 2.0);
        assert_eq!(tick_step(0.03, 5.0), 0.01);
        assert_eq!(tick_step(23.0, 8.0), 5.0);
    }
}
