//! The verdict of `model compare`: how many of the path's segments the probe puts outside the
//! model's tolerance. Every segment out at once says more than each one's hypothesis: the probe
//! is likely of another path.

use std::fmt;

use serde::Serialize;

/// What `model compare` concludes over all segments.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
// The variant names are the released kinds (`within_tolerance`, ...), not a naming slip.
#[allow(clippy::enum_variant_names)]
pub(crate) enum CompareVerdict {
    /// Every segment's measurement lies within tolerance of the model.
    WithinTolerance { segments: usize },
    /// Every one of several segments lies outside: the probe may not be of this path.
    AllOutsideTolerance { segments: usize },
    /// Some segments lie outside; each one's hypothesis says why.
    OutsideTolerance {
        anomalous_segments: usize,
        segments: usize,
    },
}

impl fmt::Display for CompareVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompareVerdict::WithinTolerance { .. } => {
                write!(f, "every segment within tolerance of the model")
            }
            CompareVerdict::AllOutsideTolerance { segments } => write!(
                f,
                "all {segments} segments outside tolerance: is the probe of this path? each segment's hypothesis says what disagrees"
            ),
            CompareVerdict::OutsideTolerance {
                anomalous_segments, ..
            } => write!(
                f,
                "{anomalous_segments} segment(s) outside tolerance: see the hypotheses"
            ),
        }
    }
}

/// The verdict from the count of segments outside tolerance among all of them.
pub(crate) fn compare_verdict(anomalous_segments: usize, segments: usize) -> CompareVerdict {
    if anomalous_segments == 0 {
        CompareVerdict::WithinTolerance { segments }
    } else if anomalous_segments == segments && segments > 1 {
        CompareVerdict::AllOutsideTolerance { segments }
    } else {
        CompareVerdict::OutsideTolerance {
            anomalous_segments,
            segments,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_outside_tolerance_names_the_verdict() {
        assert_eq!(
            compare_verdict(0, 3),
            CompareVerdict::WithinTolerance { segments: 3 }
        );
        assert_eq!(
            compare_verdict(3, 3),
            CompareVerdict::AllOutsideTolerance { segments: 3 }
        );
        // One segment out of one is that segment's fault, not the probe's.
        assert_eq!(
            compare_verdict(1, 1),
            CompareVerdict::OutsideTolerance {
                anomalous_segments: 1,
                segments: 1
            }
        );
        let some = compare_verdict(1, 3);
        assert_eq!(
            some.to_string(),
            "1 segment(s) outside tolerance: see the hypotheses"
        );
        let json = serde_json::to_value(&some).unwrap();
        assert_eq!(json["kind"], "outside_tolerance");
        assert_eq!(json["anomalous_segments"], 1);
        assert_eq!(json["segments"], 3);
        assert_eq!(
            compare_verdict(2, 2).to_string(),
            "all 2 segments outside tolerance: is the probe of this path? each segment's hypothesis says what disagrees"
        );
    }
}
