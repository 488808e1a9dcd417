//! Plots for the page, drawn by [`crate::plot`] from numbers a file supplied, so first made
//! safe to draw: non-finite and absurd values are dropped, long series thinned, and a plot
//! with nothing left is not drawn at all.

use crate::plot::{Curve, Labels, Plot, heatmap_svg};

use super::markup::{Markup, Svg};

/// Larger coordinates than this (in the plotted unit) are not data but damage.
const LIMIT: f64 = 1e15;
/// Points drawn per curve; longer series are thinned evenly.
pub const MAX_POINTS: usize = 2000;
/// Curves drawn per plot.
pub const MAX_CURVES: usize = 16;
/// Rows and columns drawn per heatmap.
const MAX_CELLS_PER_SIDE: usize = 64;

fn sane(v: f64) -> bool {
    v.is_finite() && v.abs() <= LIMIT
}

/// `curve` without its points that are not data (not finite, or beyond 1e15), thinned evenly
/// to [`MAX_POINTS`].
pub fn clean(mut curve: Curve) -> Curve {
    curve.series.points.retain(|(x, y)| sane(*x) && sane(*y));
    let n = curve.series.points.len();
    if n > MAX_POINTS {
        let step = n.div_ceil(MAX_POINTS);
        curve.series.points = curve.series.points.iter().copied().step_by(step).collect();
    }
    if let Some((a, b)) = curve.fit {
        let ends_sane = curve
            .series
            .points
            .iter()
            .all(|(x, _)| sane(a + b * x) && sane(b * x));
        if !(sane(a) && sane(b) && ends_sane) {
            curve.fit = None;
        }
    }
    curve
}

/// How a chart's axes are chosen (see [`Plot`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Axes {
    /// The x axis starts at zero ([`Plot::x_from_zero`]).
    pub x_from_zero: bool,
    /// A log x axis when the values span decades ([`Plot::x_log_when_wide`]).
    pub x_log_when_wide: bool,
    /// The y axis ends above the bulk when a few points stand far above it
    /// ([`Plot::y_cut_outliers`]): `Some(unit)` of the y values, which the note of the
    /// highest point cut is written in.
    pub y_cut_outliers: Option<&'static str>,
}

/// A line or scatter plot of `curves`, or `None` when no curve has a point to draw.
pub fn chart(labels: Labels<'_>, curves: Vec<Curve>, x_from_zero: bool) -> Option<Svg> {
    chart_with(
        labels,
        curves,
        Axes {
            x_from_zero,
            ..Axes::default()
        },
    )
}

/// [`chart`] with its axes chosen by `axes`.
pub fn chart_with(labels: Labels<'_>, curves: Vec<Curve>, axes: Axes) -> Option<Svg> {
    let curves: Vec<Curve> = curves
        .into_iter()
        .map(clean)
        .filter(|c| !c.series.points.is_empty())
        .take(MAX_CURVES)
        .collect();
    if curves.is_empty() {
        return None;
    }
    let mut plot = curves.into_iter().fold(Plot::new(labels), Plot::curve);
    if axes.x_from_zero {
        plot = plot.x_from_zero();
    }
    if axes.x_log_when_wide {
        plot = plot.x_log_when_wide();
    }
    if let Some(unit) = axes.y_cut_outliers {
        plot = plot.y_cut_outliers(unit);
    }
    plot.svg().ok().map(Svg::from_plot)
}

/// A heatmap of `values[row][column]`, or `None` when it has no value to draw.
pub fn heatmap(
    labels: Labels<'_>,
    columns: &[String],
    rows: &[String],
    values: &[Vec<Option<f64>>],
) -> Option<Svg> {
    let columns = &columns[..columns.len().min(MAX_CELLS_PER_SIDE)];
    let rows = &rows[..rows.len().min(MAX_CELLS_PER_SIDE)];
    let values: Vec<Vec<Option<f64>>> = values
        .iter()
        .take(rows.len())
        .map(|row| {
            row.iter()
                .take(columns.len())
                .map(|v| v.filter(|v| sane(*v) && *v >= 0.0))
                .collect()
        })
        .collect();
    if values.iter().flatten().all(Option::is_none) {
        return None;
    }
    heatmap_svg(labels, columns, rows, &values)
        .ok()
        .map(Svg::from_plot)
}

/// Appends a plot under a caption, if there is one.
pub fn figure(m: &mut Markup, caption: &str, svg: Option<Svg>) {
    if let Some(svg) = svg {
        m.lit("<figure>").svg(&svg);
        m.lit("<figcaption class=\"dim\">")
            .text(caption)
            .lit("</figcaption></figure>\n");
    }
}
