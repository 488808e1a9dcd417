//! Judging a reproduced figure against a fixed tolerance, with the run's own interval beside
//! it (issue 31).
//!
//! A tolerance widened by the run's own interval ("2% + this run's +-41.8%") lets a run's
//! noise count as agreement: the wider the noise, the more rows are "within". The tolerance
//! here is fixed (the paper's, or one the docs justify), and the interval only decides whether
//! the run can judge the row at all. An interval wider than the tolerance cannot tell a row
//! within the tolerance from one outside it, so such a row is "not measured precisely
//! enough", unless it is off by more than the tolerance and the interval together: then no
//! spread of this run explains it, and it is outside.

use super::Verdict;

/// A row's verdict and the clause that explains it (empty when the figures say it all).
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub struct Judged {
    pub verdict: Verdict,
    pub said: &'static str,
}

/// A figure off by `off` from the configured one, against a fixed `tolerance` and the run's
/// own 95% half-width `half_width` (same unit; NaN when the run has no interval).
#[doc(hidden)]
pub fn judge(off: f64, tolerance: f64, half_width: f64) -> Judged {
    let off = off.abs();
    if !off.is_finite() {
        return Judged {
            verdict: Verdict::Outside,
            said: "; not measured",
        };
    }
    if !half_width.is_finite() {
        return Judged {
            verdict: Verdict::Imprecise,
            said: "; not measured precisely enough: the run has no interval (fewer than three rounds)",
        };
    }
    if half_width > tolerance {
        if off > tolerance + half_width {
            Judged {
                verdict: Verdict::Outside,
                said: "; off by more than the tolerance and this run's interval together: a bias, not the run's spread",
            }
        } else {
            Judged {
                verdict: Verdict::Imprecise,
                said: "; not measured precisely enough: this run's interval is wider than the tolerance, so it cannot tell within from outside",
            }
        }
    } else if off <= tolerance {
        Judged {
            verdict: Verdict::Within,
            said: "",
        }
    } else {
        Judged {
            verdict: Verdict::Outside,
            said: "; beyond the tolerance, which this run's interval is narrower than: a bias, not the run's spread",
        }
    }
}
