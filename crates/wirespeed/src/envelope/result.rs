//! The schema of `wirespeed envelope` (`wirespeed.envelope.v1`): the model's envelope and,
//! when asked, its arithmetic. It imports nothing of its siblings.

use serde::Serialize;
use wirespeed_model::RateFormat;
use wirespeed_model::envelope::{Envelope, ExplainLine};

/// The envelope as printed: the model's figures plus, when asked, the arithmetic.
#[derive(Debug, Serialize)]
pub struct EnvelopeReport {
    #[serde(flatten)]
    pub envelope: Envelope,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Vec<ExplainLine>>,
    #[serde(skip)]
    pub rate_format: RateFormat,
}
