//! The schema of `wirespeed autoneg` (`wirespeed.autoneg.v1`): the job asked for (two partners
//! to resolve, a word to decode, abilities to encode) and what it gives. It imports nothing of
//! its siblings.

use serde::Serialize;
use wirespeed_model::autoneg::codeword::FieldRow;
use wirespeed_model::autoneg::{Abilities, BasePage, LinkCodeWord, Partner, Resolution};

/// What was asked, for the document.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(tag = "job", rename_all = "snake_case")]
pub enum Params {
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
pub enum AutonegReport {
    Resolve(ResolveReport),
    Word(WordReport),
}

#[derive(Debug, Serialize)]
pub struct ResolveReport {
    pub a: Partner,
    pub b: Partner,
    /// The base page each negotiating end sends; `None` for a forced end (it sends none).
    pub a_base_page: Option<LinkCodeWord>,
    pub b_base_page: Option<LinkCodeWord>,
    #[serde(flatten)]
    pub resolution: Resolution,
}

#[derive(Debug, Serialize)]
pub struct WordReport {
    pub word: LinkCodeWord,
    pub binary: String,
    pub base_page: BasePage,
    pub advertised: Option<Abilities>,
    pub summary: String,
    pub fields: Vec<FieldRow>,
}
