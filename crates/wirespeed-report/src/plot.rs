//! SVG plots: curves (one per series, as in the seeds' figures), scatters with their fitted
//! lines (seed 001's delay against packet size) and heatmaps (a matrix such as the socket-buffer
//! sweep). SVG text needs no font library, so plots work on any machine.
//!
//! [`line_plot_svg`] draws every series as a line through marked points; [`Plot`] chooses per
//! series ([`Curve`]): a line only (simulated curves), points only (measured minimums), and a
//! fitted line `y = intercept + slope x` drawn across the points' x range in their colour.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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
    pub fn fit_ends(&self) -> Option<[(f64, f64); 2]> {
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

/// A plot of curves, y from zero, with a legend naming every curve beside the plotting area.
#[derive(Debug, Clone)]
pub struct Plot<'a> {
    labels: Labels<'a>,
    curves: Vec<Curve>,
    x_from_zero: bool,
    x_log_when_wide: bool,
    /// The y values' unit when the axis may be cut, for the note of the highest point cut.
    y_cut_outliers: Option<&'a str>,
}

impl<'a> Plot<'a> {
    /// An empty plot with these titles; the x axis spans the data.
    pub fn new(labels: Labels<'a>) -> Self {
        Self {
            labels,
            curves: Vec::new(),
            x_from_zero: false,
            x_log_when_wide: false,
            y_cut_outliers: None,
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

    /// Draws the x axis logarithmic when its values span decades ([`x_scale`]): buffers of 1
    /// to 256 packets, round trips of 0.3 ms idle and 90 ms loaded.
    #[must_use]
    pub fn x_log_when_wide(mut self) -> Self {
        self.x_log_when_wide = true;
        self
    }

    /// Ends the y axis above the bulk of the points when a few stand far above it
    /// ([`outlier_cut`]); those are drawn as triangles on the top edge and counted in the
    /// legend with the highest of them in `unit` (the y values' own: "ms"), so the cut is
    /// visible and its size readable.
    #[must_use]
    pub fn y_cut_outliers(mut self, unit: &'a str) -> Self {
        self.y_cut_outliers = Some(unit);
        self
    }

    /// The SVG document.
    pub fn svg(&self) -> Result<String, PlotError> {
        let xs: Vec<f64> = self
            .curves
            .iter()
            .flat_map(|c| {
                c.finite_points()
                    .map(|p| p.0)
                    .chain(c.fit_ends().into_iter().flatten().map(|p| p.0))
            })
            .collect();
        let ys = || {
            self.curves.iter().flat_map(|c| {
                c.finite_points()
                    .map(|p| p.1)
                    .chain(c.fit_ends().into_iter().flatten().map(|p| p.1))
            })
        };
        let scale = if self.x_log_when_wide && !self.x_from_zero {
            x_scale(&xs)
        } else {
            Scale::Linear
        };
        let cut = if self.y_cut_outliers.is_some() {
            // Marked points only: a box or a marker line drawn to the top is not data.
            let points: Vec<f64> = self
                .curves
                .iter()
                .filter(|c| c.mark != Mark::Line)
                .flat_map(|c| c.finite_points().map(|p| p.1))
                .collect();
            outlier_cut(&points)
        } else {
            None
        };
        let x = match scale {
            Scale::Linear => range(xs.iter().copied(), self.x_from_zero),
            Scale::Log => log_range(&xs),
        };
        let y = match cut {
            Some(top) => (ys().fold(0.0, f64::min), top),
            None => range(ys(), true),
        };
        let off_scale = cut.map(|top| {
            let above: Vec<f64> = ys().filter(|v| *v > top).collect();
            (above.len(), above.iter().copied().fold(top, f64::max))
        });
        let legend = self.legend_lines(off_scale);
        let legend_width = legend_width(legend.iter().map(|l| l.text.as_str()));
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (PLOT_WIDTH + legend_width, PLOT_HEIGHT))
                .into_drawing_area();
            root.fill(&WHITE).map_err(|e| PlotError(e.to_string()))?;
            let (area, legend_area) = root.split_horizontally(PLOT_WIDTH);
            match scale {
                Scale::Linear => draw_curves(&area, self, x.0..x.1, y, cut),
                Scale::Log => draw_curves(&area, self, (x.0..x.1).log_scale(), y, cut),
            }
            .map_err(PlotError)?;
            draw_legend(&legend_area, &legend).map_err(PlotError)?;
            root.present().map_err(|e| PlotError(e.to_string()))?;
        }
        Ok(svg)
    }

    /// The legend's lines: one per named curve (or per curve when there are several), then
    /// the count of points drawn on the top edge when the y axis was cut.
    fn legend_lines(&self, off_scale: Option<(usize, f64)>) -> Vec<LegendLine> {
        let named = self.curves.iter().any(|c| !c.series.name.is_empty());
        let mut lines: Vec<LegendLine> = if self.curves.len() > 1 || named {
            self.curves
                .iter()
                .enumerate()
                .map(|(i, c)| LegendLine {
                    text: legend_label(&c.series.name),
                    swatch: Swatch::Curve {
                        color: PALETTE[i % PALETTE.len()],
                        dot: c.mark != Mark::Line,
                        bar: c.mark != Mark::Points || c.fit.is_some(),
                    },
                })
                .collect()
        } else {
            Vec::new()
        };
        if let Some((n, max)) = off_scale.filter(|(n, _)| *n > 0) {
            lines.push(LegendLine {
                text: format!("{} above the axis,", plural(n, "point", "points")),
                swatch: Swatch::OffScale,
            });
            let unit = self.y_cut_outliers.unwrap_or_default();
            lines.push(LegendLine {
                text: format!("highest {} {unit}", short(max))
                    .trim_end()
                    .to_string(),
                swatch: Swatch::None,
            });
        }
        lines
    }
}

/// `n` and the noun in the number it takes: `1 point`, `2 points`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Width and height of a plot's drawing, legend aside (SVG pixels, drawn 1:1 on a page
/// 1280 pixels wide, so that every text keeps its stated size).
pub const PLOT_WIDTH: u32 = 640;
const PLOT_HEIGHT: u32 = 440;
/// Font sizes in the page's pixels: nothing under 12 at 1280 pixels, the floor the report is
/// checked against in a browser (`tests/report_browser.rs`).
const CAPTION_FONT: f64 = 18.0;
const AXIS_TITLE_FONT: f64 = 15.0;
const TICK_FONT: f64 = 13.0;
const LEGEND_FONT: f64 = 14.0;
const CELL_FONT: f64 = 13.0;

/// The size to ask plotters for so that its SVG text is `px` pixels: its SVG backend writes a
/// font of size `s` as `font-size` `s / 1.24` (plotters-svg 0.3, `draw_text`), which is how
/// its default 12 became text of under 10 pixels.
fn font(px: f64) -> (&'static str, f64) {
    ("sans-serif", (px * 1.24).ceil())
}
/// Legend labels longer than this are cut with an ellipsis (the tables carry full names).
pub const LEGEND_CHARS: usize = 32;
/// Height of one legend line.
const LEGEND_LINE: i32 = 22;

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Equal steps for equal differences.
    Linear,
    /// Equal steps for equal ratios.
    Log,
}

/// The ratio of largest to smallest value from which an axis is drawn logarithmic: past
/// 1.5 decades a linear axis crushes the small values into its first few pixels (an idle CDF
/// at 0.3 ms drawn as a vertical stroke beside a loaded one at 90 ms).
const LOG_FROM_SPAN: f64 = 30.0;

/// Log when every value is positive and they span [`LOG_FROM_SPAN`] or more; linear
/// otherwise (a zero or a negative value has no place on a log axis).
pub fn x_scale(values: &[f64]) -> Scale {
    let finite = || values.iter().copied().filter(|v| v.is_finite());
    if finite().next().is_none() || finite().any(|v| v <= 0.0) {
        return Scale::Linear;
    }
    let (lo, hi) = finite().fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if hi / lo >= LOG_FROM_SPAN {
        Scale::Log
    } else {
        Scale::Linear
    }
}

/// A log axis' ends: the data's, widened by a tenth of a decade each side.
pub fn log_range(values: &[f64]) -> (f64, f64) {
    let (lo, hi) = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let pad = 10f64.powf(0.1);
    (lo / pad, hi * pad)
}

/// Points needed before any is called an outlier: in a short series every point matters.
const CUT_MIN_POINTS: usize = 20;
/// How far above the rest of the points a point must be to leave the axis (times the
/// highest point kept).
const CUT_FACTOR: f64 = 3.0;

/// The top of a y axis that leaves out the highest points, at most one in fifty, when the
/// lowest of those stands more than [`CUT_FACTOR`] times above the highest of the rest (one
/// 1.1 s connect beside round trips of 80 to 100 ms): the rest gets the whole height. `None`
/// when no such gap exists, or with fewer than [`CUT_MIN_POINTS`] points.
pub fn outlier_cut(ys: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = ys.iter().copied().filter(|y| y.is_finite()).collect();
    let n = v.len();
    if n < CUT_MIN_POINTS {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let may_cut = (n / 50).max(1);
    (1..=may_cut).find_map(|k| {
        let (kept, lowest_cut) = (v[n - 1 - k], v[n - k]);
        (kept > 0.0 && lowest_cut > kept * CUT_FACTOR).then_some(kept * 1.1)
    })
}

/// A legend label, cut to [`LEGEND_CHARS`] characters.
pub fn legend_label(name: &str) -> String {
    if name.chars().count() <= LEGEND_CHARS {
        name.to_string()
    } else {
        let cut: String = name.chars().take(LEGEND_CHARS - 1).collect();
        format!("{cut}…")
    }
}

/// What stands left of a legend line's text.
#[derive(Debug, Clone, Copy)]
enum Swatch {
    Curve {
        color: RGBColor,
        dot: bool,
        bar: bool,
    },
    OffScale,
    None,
}

#[derive(Debug, Clone)]
struct LegendLine {
    text: String,
    swatch: Swatch,
}

/// The legend's width in pixels for these lines (none: no legend), from an average glyph of
/// 0.6 em: wide enough that no label is clipped, and never over the plotting area.
pub fn legend_width<'s>(lines: impl Iterator<Item = &'s str>) -> u32 {
    let longest = lines.map(|l| l.chars().count()).max();
    match longest {
        None => 0,
        Some(chars) => ((chars as f64 * LEGEND_FONT * 0.6) as u32 + 48).clamp(96, 320),
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

/// A tick label: at most six decimals, trailing zeros dropped, thousands grouped (`0.005`,
/// `10`, `1,600,000`), and no `-0`.
pub fn tick(v: f64) -> String {
    let s = format!("{:.6}", v.abs());
    let s = s.trim_end_matches('0').trim_end_matches('.');
    let (whole, fraction) = s.split_once('.').map_or((s, None), |(w, f)| (w, Some(f)));
    let grouped = whole
        .parse::<u64>()
        .map_or_else(|_| whole.to_string(), wirespeed_model::units::group_digits);
    let text = match fraction {
        Some(f) => format!("{grouped}.{f}"),
        None => grouped,
    };
    if v < 0.0 && text != "0" {
        format!("-{text}")
    } else {
        text
    }
}

fn draw_curves<X>(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    plot: &Plot<'_>,
    x: X,
    y: (f64, f64),
    cut: Option<f64>,
) -> Result<(), String>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .caption(plot.labels.title, font(CAPTION_FONT))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(84)
        .build_cartesian_2d(x, y.0..y.1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(plot.labels.x)
        .y_desc(plot.labels.y)
        .label_style(font(TICK_FONT))
        .axis_desc_style(font(AXIS_TITLE_FONT))
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .draw()
        .map_err(err)?;
    // Points above a cut axis sit on its top edge, marked as triangles.
    let top = cut.unwrap_or(f64::INFINITY);
    let clamp = |(x, y): (f64, f64)| (x, y.min(top));
    for (i, curve) in plot.curves.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let line = color.stroke_width(2);
        if let Some(ends) = curve.fit_ends() {
            chart
                .draw_series(LineSeries::new(ends.map(clamp), line))
                .map_err(err)?;
        }
        if curve.mark != Mark::Points {
            chart
                .draw_series(LineSeries::new(curve.finite_points().map(clamp), line))
                .map_err(err)?;
        }
        if curve.mark != Mark::Line {
            chart
                .draw_series(
                    curve
                        .finite_points()
                        .filter(|p| p.1 <= top)
                        .map(|p| Circle::new(p, 3, color.filled())),
                )
                .map_err(err)?;
        }
        chart
            .draw_series(
                curve
                    .finite_points()
                    .filter(|p| p.1 > top)
                    .map(|p| TriangleMarker::new(clamp(p), 6, color.filled())),
            )
            .map_err(err)?;
    }
    Ok(())
}

/// The legend, beside the plotting area so that it never covers a curve.
fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    lines: &[LegendLine],
) -> Result<(), String> {
    let style = font(LEGEND_FONT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (i, l) in lines.iter().enumerate() {
        let y = 56 + i as i32 * LEGEND_LINE;
        match l.swatch {
            Swatch::Curve { color, dot, bar } => {
                if bar {
                    area.draw(&Rectangle::new([(4, y - 1), (28, y + 1)], color.filled()))
                        .map_err(err)?;
                }
                if dot {
                    area.draw(&Circle::new((16, y), 3, color.filled()))
                        .map_err(err)?;
                }
            }
            Swatch::OffScale => {
                area.draw(&TriangleMarker::new((16, y), 6, BLACK.filled()))
                    .map_err(err)?;
            }
            Swatch::None => {}
        }
        area.draw(&Text::new(l.text.clone(), (36, y), style.clone()))
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
        .caption(labels.title, font(CAPTION_FONT))
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
        .label_style(font(TICK_FONT))
        .axis_desc_style(font(AXIS_TITLE_FONT))
        .draw()
        .map_err(err)?;
    let (width, height) = chart.plotting_area().dim_in_pixel();
    let cell = (
        f64::from(width) / columns as f64,
        f64::from(height) / rows as f64,
    );
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
            if let Some(v) = value.filter(|v| cell_label_fits(cell, &short(*v))) {
                let v = &v;
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
                        font(CELL_FONT).into_font().color(&ink).pos(
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

/// Whether a cell of `(width, height)` pixels holds `text` at [`CELL_FONT`] (an average glyph
/// of 0.6 em, a little room each side): a cell too small shows its value by its shade alone,
/// rather than in a text too small to read (the table beside it has every figure).
pub fn cell_label_fits(cell: (f64, f64), text: &str) -> bool {
    text.chars().count() as f64 * CELL_FONT * 0.6 + 4.0 <= cell.0 && CELL_FONT + 2.0 <= cell.1
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A value in three significant digits (a heatmap cell, the highest point cut off an axis),
/// thousands grouped.
pub fn short(v: f64) -> String {
    if v.abs() >= 1000.0 && v.abs() < 1e15 {
        tick(v.round())
    } else {
        wirespeed_model::units::significant(v, 3)
    }
}

/// The binary unit a byte rate peaking at `peak` bytes per second is plotted in, and the
/// bytes per second in one of it: the largest of KiB/s, MiB/s and GiB/s in which the peak is
/// at least 10 (loopback's 1.6 GB/s as 1,526 MiB/s, not 1,600,000 KiB/s).
pub fn byte_rate_unit(peak: f64) -> (&'static str, f64) {
    const UNITS: [(&str, f64); 3] = [
        ("GiB/s", 1024.0 * 1024.0 * 1024.0),
        ("MiB/s", 1024.0 * 1024.0),
        ("KiB/s", 1024.0),
    ];
    UNITS
        .iter()
        .copied()
        .find(|(_, size)| peak.is_finite() && peak >= 10.0 * size)
        .unwrap_or(UNITS[2])
}
