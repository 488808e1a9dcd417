//! The schema of `wirespeed autoneg` (`wirespeed.autoneg.v1`): the job asked for (two partners
//! to resolve, a word to decode, abilities to encode) and what it gives. It imports nothing of
//! its siblings.

use serde::Serialize;
use wirespeed_model::autoneg::codeword::FieldRow;
use wirespeed_model::autoneg::{Abilities, BasePage, LinkCodeWord, Partner, Resolution};

/// What was asked, for the document.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(tag = "job", rename_all = "snake_case")]
pub(crate) enum Params {
    Resolve {
        a: Partner,
        b: Partner,
    },
    Decode {
        word: LinkCodeWord,
    },
    Encode {
        modes: Abilities,
        pause: bool,
        asym_pause: bool,
        remote_fault: bool,
        ack: bool,
    },
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum AutonegReport {
    Resolve(ResolveReport),
    Word(WordReport),
}

#[derive(Debug, Serialize)]
pub(crate) struct ResolveReport {
    pub(crate) a: Partner,
    pub(crate) b: Partner,
    /// The base page each negotiating end sends; `None` for a forced end (it sends none).
    pub(crate) a_base_page: Option<LinkCodeWord>,
    pub(crate) b_base_page: Option<LinkCodeWord>,
    #[serde(flatten)]
    pub(crate) resolution: Resolution,
}

#[derive(Debug, Serialize)]
pub(crate) struct WordReport {
    pub(crate) word: LinkCodeWord,
    pub(crate) binary: String,
    pub(crate) base_page: BasePage,
    pub(crate) advertised: Option<Abilities>,
    pub(crate) summary: String,
    pub(crate) fields: Vec<FieldRow>,
}
