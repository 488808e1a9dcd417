//! SVG plots: curves (one per series, as in the seeds' figures), scatters with their fitted
//! lines (seed 001's delay against packet size) and heatmaps (a matrix such as the socket-buffer
//! sweep). SVG text needs no font library, so plots work on any machine.
//!
//! [`line_plot_svg`] draws every series as a line through marked points; [`Plot`] chooses per
//! series ([`Curve`]): a line only (simulated curves), points only (measured minimums), and a
//! fitted line `y = intercept + slope x` drawn across the points' x range in their colour.

use plotters::prelude::*;

/// A named curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// (x, y) points, in drawing order; points with a non-finite coordinate are skipped.
    pub points: Vec<(f64, f64)>,
}

/// A plot that could not be drawn (a bug, since drawing goes to a string, but reported rather
/// than hidden).
#[derive(Debug, Clone, thiserror::Error)]
#[error("the plot could not be drawn: {0}")]
pub struct PlotError(String);

/// Axis titles and the plot's caption.
#[derive(Debug, Clone, Copy)]
pub struct Labels<'a> {
    /// Caption above the plot.
    pub title: &'a str,
    /// Horizontal axis title.
    pub x: &'a str,
    /// Vertical axis title.
    pub y: &'a str,
}

/// How a series' points are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Mark {
    /// A line through the points, each point marked.
    #[default]
    LineAndPoints,
    /// A line through the points, unmarked (a simulated curve).
    Line,
    /// The points alone (a scatter of measurements).
    Points,
}

/// A series, how it is drawn, and the straight line fitted to it, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The points and their legend label.
    pub series: Series,
    /// How the points are drawn.
    pub mark: Mark,
    /// `(intercept, slope)` of `y = intercept + slope x`, drawn across the series' x range in
    /// the series' colour.
    pub fit: Option<(f64, f64)>,
}

impl Curve {
    /// `series` drawn with `mark`, without a fitted line.
    pub fn new(series: Series, mark: Mark) -> Self {
        Self {
            series,
            mark,
            fit: None,
        }
    }

    /// The same curve with the line `y = intercept + slope x` drawn across its x range.
    #[must_use]
    pub fn with_fit(mut self, intercept: f64, slope: f64) -> Self {
        self.fit = Some((intercept, slope));
        self
    }

    fn finite_points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.series
            .points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    }

    /// The fitted line's two ends, at the smallest and largest finite x.
    fn fit_ends(&self) -> Option<[(f64, f64); 2]> {
        let (a, b) = self.fit?;
        let (lo, hi) = self
            .finite_points()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (x, _)| {
                (lo.min(x), hi.max(x))
            });
        let ends = [(lo, a + b * lo), (hi, a + b * hi)];
        (lo.is_finite() && ends.iter().all(|p| p.1.is_finite())).then_some(ends)
    }
}

/// A plot of curves on linear axes, y from zero, with a legend naming every curve.
#[derive(Debug, Clone)]
pub struct Plot<'a> {
    labels: Labels<'a>,
    curves: Vec<Curve>,
    x_from_zero: bool,
}

impl<'a> Plot<'a> {
    /// An empty plot with these titles; the x axis spans the data.
    pub fn new(labels: Labels<'a>) -> Self {
        Self {
            labels,
            curves: Vec::new(),
            x_from_zero: false,
        }
    }

    /// Adds a curve; curves are coloured in the order they are added.
    #[must_use]
    pub fn curve(mut self, curve: Curve) -> Self {
        self.curves.push(curve);
        self
    }

    /// Starts the x axis at zero (or below, for negative data), so that a fitted line's
    /// intercept can be read against the axis.
    #[must_use]
    pub fn x_from_zero(mut self) -> Self {
        self.x_from_zero = true;
        self
    }

    /// The SVG document.
    pub fn svg(&self) -> Result<String, PlotError> {
        let xs = || {
            self.curves.iter().flat_map(|c| {
                c.finite_points()
                    .map(|p| p.0)
                    .chain(c.fit_ends().into_iter().flatten().map(|p| p.0))
            })
        };
        let ys = || {
            self.curves.iter().flat_map(|c| {
                c.finite_points()
                    .map(|p| p.1)
                    .chain(c.fit_ends().into_iter().flatten().map(|p| p.1))
            })
        };
        let x = range(xs(), self.x_from_zero);
        let y = range(ys(), true);
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (720, 480)).into_drawing_area();
            draw_curves(&root, self, x, y).map_err(PlotError)?;
            root.present().map_err(|e| PlotError(e.to_string()))?;
        }
        Ok(svg)
    }
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

fn range(values: impl Iterator<Item = f64>, floor_at_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if floor_at_zero {
        lo = lo.min(0.0);
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    (lo, hi + (hi - lo) * 0.05)
}

/// Curves on linear axes, y from zero, each a line through its marked points, with a legend.
/// Returns the SVG document.
pub fn line_plot_svg(labels: Labels<'_>, series: &[Series]) -> Result<String, PlotError> {
    series
        .iter()
        .fold(Plot::new(labels), |plot, s| {
            plot.curve(Curve::new(s.clone(), Mark::LineAndPoints))
        })
        .svg()
}

/// A tick label: at most six decimals, trailing zeros dropped (`0.005`, `10`, `1500`).
fn tick(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.to_string() }
}

fn draw_curves(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    plot: &Plot<'_>,
    x: (f64, f64),
    y: (f64, f64),
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(root)
        .caption(plot.labels.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x.0..x.1, y.0..y.1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(plot.labels.x)
        .y_desc(plot.labels.y)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .draw()
        .map_err(err)?;
    for (i, curve) in plot.curves.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let line = color.stroke_width(2);
        if let Some(ends) = curve.fit_ends() {
            chart
                .draw_series(LineSeries::new(ends, line))
                .map_err(err)?;
        }
        if curve.mark != Mark::Points {
            chart
                .draw_series(LineSeries::new(curve.finite_points(), line))
                .map_err(err)?;
        }
        let dots = if curve.mark == Mark::Line {
            Vec::new()
        } else {
            curve.finite_points().collect()
        };
        // The legend entry: a dot for marked points, a bar for a line (a thin rectangle, so
        // that the document's polylines are exactly the curves and fitted lines). A part
        // left out is transparent, which the SVG backend does not write.
        let shown = |on: bool| if on { color.to_rgba() } else { TRANSPARENT };
        let dot = shown(curve.mark != Mark::Line);
        let bar = shown(curve.mark != Mark::Points || curve.fit.is_some());
        chart
            .draw_series(dots.into_iter().map(|p| Circle::new(p, 3, color.filled())))
            .map_err(err)?
            .label(curve.series.name.clone())
            .legend(move |(x, y)| {
                EmptyElement::at((x, y))
                    + Rectangle::new([(0, -1), (20, 1)], bar.filled())
                    + Circle::new((10, 0), 3, dot.filled())
            });
    }
    let named = plot.curves.iter().any(|c| !c.series.name.is_empty());
    if plot.curves.len() > 1 || named {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
    }
    Ok(())
}

/// A heatmap of `values[row][column]` (None = no data, drawn grey), each cell labelled with
/// its value; darker is higher. Rows are drawn bottom-up so that row 0 sits at the origin.
pub fn heatmap_svg(
    labels: Labels<'_>,
    column_ticks: &[String],
    row_ticks: &[String],
    values: &[Vec<Option<f64>>],
) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 620)).into_drawing_area();
        draw_heatmap(&root, labels, column_ticks, row_ticks, values).map_err(PlotError)?;
        root.present().map_err(|e| PlotError(e.to_string()))?;
    }
    Ok(svg)
}

fn draw_heatmap(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    labels: Labels<'_>,
    column_ticks: &[String],
    row_ticks: &[String],
    values: &[Vec<Option<f64>>],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let columns = column_ticks.len().max(1);
    let rows = row_ticks.len().max(1);
    let max = values
        .iter()
        .flatten()
        .flatten()
        .copied()
        .fold(0.0, f64::max);
    let mut chart = ChartBuilder::on(root)
        .caption(labels.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..columns as f64, 0f64..rows as f64)
        .map_err(err)?;
    let column_label = |v: &f64| {
        column_ticks
            .get(v.floor() as usize)
            .cloned()
            .unwrap_or_default()
    };
    let row_label = |v: &f64| {
        row_ticks
            .get(v.floor() as usize)
            .cloned()
            .unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(columns * 2 + 1)
        .y_labels(rows * 2 + 1)
        .x_label_formatter(&|v| {
            if (v.fract() - 0.5).abs() < 1e-9 {
                column_label(v)
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|v| {
            if (v.fract() - 0.5).abs() < 1e-9 {
                row_label(v)
            } else {
                String::new()
            }
        })
        .x_desc(labels.x)
        .y_desc(labels.y)
        .draw()
        .map_err(err)?;
    for (r, row) in values.iter().enumerate() {
        for (c, value) in row.iter().enumerate() {
            let (x, y) = (c as f64, r as f64);
            let fill = match value {
                Some(v) if max > 0.0 => {
                    let shade = 1.0 - (v / max).clamp(0.0, 1.0);
                    let level =
                        |full: u8| (f64::from(full) + (255.0 - f64::from(full)) * shade) as u8;
                    RGBColor(level(8), level(48), level(107))
                }
                _ => RGBColor(220, 220, 220),
            };
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x, y), (x + 1.0, y + 1.0)],
                    fill.filled(),
                )))
                .map_err(err)?;
            if let Some(v) = value {
                let ink = if max > 0.0 && *v / max > 0.5 {
                    WHITE
                } else {
                    BLACK
                };
                let text = crate::plot::short(*v);
                chart
                    .draw_series(std::iter::once(Text::new(
                        text,
                        (x + 0.5, y + 0.5),
                        ("sans-serif", 11).into_font().color(&ink).pos(
                            plotters::style::text_anchor::Pos::new(
                                plotters::style::text_anchor::HPos::Center,
                                plotters::style::text_anchor::VPos::Center,
                            ),
                        ),
                    )))
                    .map_err(err)?;
            }
        }
    }
    Ok(())
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A value in three significant digits for a heatmap cell.
fn short(v: f64) -> String {
    wirespeed_model::units::significant(v, 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_plots_carry_their_labels() {
        let s = Series {
            name: "LANCE".into(),
            points: vec![(1.0, 384.0), (2.0, 606.0)],
        };
        let svg = line_plot_svg(
            Labels {
                title: "diagonal",
                x: "packets",
                y: "KiB/s",
            },
            &[s],
        )
        .unwrap();
        assert!(svg.starts_with("<svg"));
        for needle in ["diagonal", "packets", "KiB/s", "LANCE"] {
            assert!(svg.contains(needle), "{needle}");
        }
    }

    const CURVE: &str = "stroke-width=\"2\"";

    fn labels() -> Labels<'static> {
        Labels {
            title: "Total bit rate",
            x: "hosts",
            y: "Mbit/s",
        }
    }

    #[test]
    fn line_curves_are_one_polyline_each_and_skip_non_finite_points() {
        let svg = Plot::new(labels())
            .curve(Curve::new(
                Series {
                    name: "64".into(),
                    points: vec![(1.0, 4.7), (2.0, 9.3), (24.0, 8.0)],
                },
                Mark::Line,
            ))
            .curve(Curve::new(
                Series {
                    name: "1536 & up".into(),
                    points: vec![(1.0, 9.4), (24.0, f64::NAN)],
                },
                Mark::Line,
            ))
            .svg()
            .unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        // Curves and fitted lines are the only strokes two pixels wide.
        assert_eq!(svg.matches(CURVE).count(), 2);
        assert_eq!(svg.matches("<circle").count(), 0, "lines are not marked");
        for needle in [
            "Total bit rate",
            "hosts",
            "Mbit/s",
            "\n64\n",
            "1536 &amp; up",
        ] {
            assert!(svg.contains(needle), "{needle}");
        }
        assert!(svg.contains("\n10\n"), "a round y tick at 10");
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn scattered_points_carry_their_fitted_line_and_a_legend_dot() {
        let svg = Plot::new(labels())
            .x_from_zero()
            .curve(
                Curve::new(
                    Series {
                        name: "hop 1 <a>".into(),
                        points: vec![(100.0, 2.0), (200.0, 3.0), (300.0, f64::NAN)],
                    },
                    Mark::Points,
                )
                .with_fit(1.0, 0.01),
            )
            .curve(Curve::new(
                Series {
                    name: "hop 2".into(),
                    points: vec![(100.0, 4.0)],
                },
                Mark::Points,
            ))
            .svg()
            .unwrap();
        assert_eq!(
            svg.matches("<circle").count(),
            5,
            "three finite points and two legend dots"
        );
        assert_eq!(svg.matches(CURVE).count(), 1, "the one fitted line");
        assert!(svg.contains("hop 1 &lt;a&gt;") && svg.contains("hop 2"));
        assert!(svg.contains("\n0\n"), "the axes start at zero");
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn fit_ends_span_the_finite_points() {
        let c = Curve::new(
            Series {
                name: String::new(),
                points: vec![(3.0, 0.0), (f64::NAN, 1.0), (1.0, 0.0)],
            },
            Mark::Points,
        )
        .with_fit(1.0, 2.0);
        assert_eq!(c.fit_ends(), Some([(1.0, 3.0), (3.0, 7.0)]));
        assert_eq!(Curve::new(c.series, Mark::Points).fit_ends(), None);
    }

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(0.0050000001), "0.005");
        assert_eq!(tick(10.0), "10");
        assert_eq!(tick(-0.0), "0");
    }

    #[test]
    fn heatmaps_label_every_cell() {
        let svg = heatmap_svg(
            Labels {
                title: "matrix",
                x: "receive",
                y: "send",
            },
            &["1p".into(), "2p".into()],
            &["1p".into(), "2p".into()],
            &[vec![Some(384.0), Some(500.0)], vec![None, Some(606.0)]],
        )
        .unwrap();
        for needle in ["384", "500", "606", "receive", "send", "1p"] {
            assert!(svg.contains(needle), "{needle}");
        }
    }
}
