//! The unit tests of `wirespeed_report::html::plots`.

use wirespeed_report::html::plots::*;
use wirespeed_report::plot::{Curve, Labels, Mark, Series};

fn labels() -> Labels<'static> {
    Labels {
        title: "t",
        x: "x",
        y: "y",
    }
}

#[test]
fn damaged_points_and_fits_are_dropped_not_drawn() {
    let curve = Curve::new(
        Series {
            name: "s".into(),
            points: vec![(1.0, f64::MAX), (f64::NAN, 1.0), (2.0, 3.0), (3.0, 4.0)],
        },
        Mark::Points,
    )
    .with_fit(f64::MAX, 1.0);
    let cleaned = clean(curve);
    assert_eq!(cleaned.series.points, vec![(2.0, 3.0), (3.0, 4.0)]);
    assert_eq!(cleaned.fit, None);
    let empty = Curve::new(
        Series {
            name: "e".into(),
            points: vec![(1e300, 1.0)],
        },
        Mark::Line,
    );
    assert!(chart(labels(), vec![empty], false).is_none());
}

#[test]
fn long_series_are_thinned() {
    let points = (0..10_000).map(|i| (f64::from(i), 1.0)).collect();
    let c = clean(Curve::new(
        Series {
            name: String::new(),
            points,
        },
        Mark::Line,
    ));
    assert!(c.series.points.len() <= MAX_POINTS);
}
