//! The unit tests of `wirespeed_report::plot`.

use wirespeed_report::plot::*;

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
fn ticks_are_short_and_grouped() {
    assert_eq!(tick(0.0050000001), "0.005");
    assert_eq!(tick(10.0), "10");
    assert_eq!(tick(-0.0), "0");
    assert_eq!(tick(-0.0000000001), "0", "a tiny negative is 0, not -0");
    assert_eq!(tick(1_600_000.0), "1,600,000");
    assert_eq!(tick(-12_345.5), "-12,345.5");
    assert_eq!(tick(999.25), "999.25");
}

#[test]
fn axes_turn_logarithmic_only_across_decades_of_positive_values() {
    assert_eq!(
        x_scale(&[0.3, 0.35, 85.0, 101.0]),
        Scale::Log,
        "idle beside loaded"
    );
    assert_eq!(
        x_scale(&[1.0, 4.0, 16.0, 64.0]),
        Scale::Log,
        "buffers by fours"
    );
    assert_eq!(
        x_scale(&[1.0, 4.0, 16.0]),
        Scale::Linear,
        "16x is not 1.5 decades"
    );
    assert_eq!(
        x_scale(&[0.0, 1.0, 1000.0]),
        Scale::Linear,
        "zero has no log"
    );
    assert_eq!(x_scale(&[-1.0, 100.0]), Scale::Linear);
    assert_eq!(x_scale(&[]), Scale::Linear);
    let (lo, hi) = log_range(&[1.0, 100.0]);
    assert!(
        lo < 1.0 && lo > 0.7 && hi > 100.0 && hi < 130.0,
        "{lo} {hi}"
    );
}

#[test]
fn one_far_outlier_is_cut_and_the_bulk_keeps_the_height() {
    let mut ys: Vec<f64> = (0..100).map(|i| 80.0 + f64::from(i % 20)).collect();
    assert_eq!(outlier_cut(&ys), None, "no outlier, no cut");
    ys.push(1100.0);
    let top = outlier_cut(&ys).expect("the 1.1 s probe is cut");
    assert!(top > 99.0 && top < 120.0, "{top}");
    ys.push(f64::NAN);
    assert_eq!(outlier_cut(&ys), Some(top), "NaN is not a point");
    // Three high points in 101 are a second population, not outliers (2 may go).
    ys.extend([900.0, 1000.0]);
    assert_eq!(outlier_cut(&ys), None);
    // A short series keeps every point in view.
    assert_eq!(outlier_cut(&[1.0, 1.0, 1.0, 50.0]), None);
    // Within 3x of the rest: no gap worth a cut.
    let mut close: Vec<f64> = vec![100.0; 50];
    close.push(290.0);
    assert_eq!(outlier_cut(&close), None);
}

#[test]
fn a_cut_axis_marks_what_it_left_out() {
    let mut points: Vec<(f64, f64)> = (0..60).map(|i| (f64::from(i) * 0.1, 90.0)).collect();
    points.push((3.0, 1100.0));
    let svg = Plot::new(labels())
        .y_cut_outliers("ms")
        .curve(Curve::new(
            Series {
                name: "TCP connect".into(),
                points,
            },
            Mark::Points,
        ))
        .svg()
        .unwrap();
    assert!(svg.contains("1 point above the axis,"), "{svg}");
    assert!(svg.contains("highest 1,100 ms"), "the cut point's unit");
    assert!(
        !svg.contains("\n1,000\n"),
        "the axis ends near 100, not at 1,100"
    );
    assert_eq!(
        svg.matches("<circle").count(),
        61,
        "60 points and the legend's dot: the cut point is a triangle"
    );
    assert!(svg.contains("<polygon"), "the triangle on the top edge");
}

#[test]
fn the_legend_sits_beside_the_plot_and_fits_its_labels() {
    assert_eq!(legend_width(std::iter::empty()), 0);
    assert_eq!(legend_width(["64 B"].into_iter()), 96, "a floor");
    let long = legend_width(["envelope ceiling, 9.415 Mbit/s"].into_iter());
    assert!((30 * 8..=320).contains(&long), "{long}");
    assert_eq!(legend_label("short"), "short");
    assert_eq!(legend_label(&"x".repeat(40)).chars().count(), LEGEND_CHARS);
    let svg = line_plot_svg(
        labels(),
        &[Series {
            name: "stream 1".into(),
            points: vec![(0.0, 1.0), (1.0, 1.0)],
        }],
    )
    .unwrap();
    // The drawing is wider than the plotting area by the legend's column.
    let legend = legend_width(["stream 1"].into_iter());
    assert!(
        svg.contains(&format!("width=\"{}\"", PLOT_WIDTH + legend)),
        "{svg}"
    );
}

#[test]
fn no_plot_text_is_under_twelve_pixels() {
    let svg = line_plot_svg(
        labels(),
        &[Series {
            name: "a".into(),
            points: vec![(0.0, 1.0), (1.0, 2.0)],
        }],
    )
    .unwrap();
    let sizes: Vec<f64> = svg
        .split("font-size=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().parse().unwrap())
        .collect();
    assert!(!sizes.is_empty());
    assert!(sizes.iter().all(|s| *s >= 12.0), "{sizes:?}");
}

#[test]
fn byte_rates_are_plotted_in_a_unit_that_keeps_figures_short() {
    assert_eq!(
        byte_rate_unit(1_600_000.0 * 1024.0).0,
        "MiB/s",
        "1,562 MiB/s"
    );
    assert_eq!(byte_rate_unit(12.0 * 1024.0 * 1024.0 * 1024.0).0, "GiB/s");
    assert_eq!(byte_rate_unit(50.0 * 1024.0 * 1024.0), ("MiB/s", 1048576.0));
    assert_eq!(
        byte_rate_unit(606.0 * 1024.0).0,
        "KiB/s",
        "the seed's own unit"
    );
    assert_eq!(byte_rate_unit(0.0).0, "KiB/s");
    assert_eq!(byte_rate_unit(f64::NAN).0, "KiB/s");
    assert_eq!(short(1612.3), "1,612");
    assert_eq!(short(38.46), "38.5");
}

#[test]
fn heatmap_cells_too_small_for_their_figure_show_only_its_shade() {
    assert!(cell_label_fits((80.0, 40.0), "1,234"));
    assert!(!cell_label_fits((20.0, 40.0), "1,234"));
    assert!(!cell_label_fits((80.0, 10.0), "1"));
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
