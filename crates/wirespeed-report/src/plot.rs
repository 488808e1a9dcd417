//! SVG plots: curves (one per series, as in the seeds' figures) and heatmaps (a matrix such as
//! the socket-buffer sweep). SVG text needs no font library, so plots work on any machine.

use plotters::prelude::*;

/// A named curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// (x, y) points, in drawing order.
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

/// Curves on linear axes, y from zero, with a legend. Returns the SVG document.
pub fn line_plot_svg(labels: Labels<'_>, series: &[Series]) -> Result<String, PlotError> {
    let mut svg = String::new();
    let points = || series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = range(points().map(|p| p.0), false);
    let (y0, y1) = range(points().map(|p| p.1), true);
    {
        let root = SVGBackend::with_string(&mut svg, (720, 480)).into_drawing_area();
        draw_lines(&root, labels, series, (x0, x1), (y0, y1)).map_err(PlotError)?;
        root.present().map_err(|e| PlotError(e.to_string()))?;
    }
    Ok(svg)
}

fn draw_lines(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    labels: Labels<'_>,
    series: &[Series],
    x: (f64, f64),
    y: (f64, f64),
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(root)
        .caption(labels.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x.0..x.1, y.0..y.1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(labels.x)
        .y_desc(labels.y)
        .draw()
        .map_err(err)?;
    for (i, s) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(err)?
            .label(s.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(err)?;
    }
    if series.len() > 1 || series.first().is_some_and(|s| !s.name.is_empty()) {
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
