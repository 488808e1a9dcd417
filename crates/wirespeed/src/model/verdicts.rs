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
#[doc(hidden)]
pub enum CompareVerdict {
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
#[doc(hidden)]
pub fn compare_verdict(anomalous_segments: usize, segments: usize) -> CompareVerdict {
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
