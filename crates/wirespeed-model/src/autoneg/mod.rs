//! Auto-negotiation of twisted-pair Ethernet (IEEE 802.3 Clause 28): what two link partners
//! tell each other, what each of them ends up running, and whether the result is a duplex
//! mismatch.
//!
//! Erickson (seed 003) found that most slow 10/100 links of his network came from a
//! misunderstanding of this function: "It isn't a system for automatic detection of speed and
//! duplex." An auto-negotiating port only learns its partner's duplex when the partner
//! auto-negotiates too; a partner forced to a speed is recognised by *parallel detection*
//! (Clause 28.2.3.1), which can tell the speed from the line signal but not the duplex, so the
//! negotiating end falls back to half duplex. A partner forced to full duplex against an
//! auto-negotiating port is therefore the classic duplex mismatch (the seed's Appendix A, rows
//! 2 and 3), and its cost is the seed's Table 7: 15 KB/s one way, 67 KB/s the other, on a
//! 10 Mbit/s link that carries 1,100 KB/s when both ends agree.
//!
//! * [`codeword`]: the 16-bit base-page link code word of a Fast Link Pulse burst (Clause
//!   28.2.1.2), a typed view over the word and its parsed form, to and from hex.
//! * [`resolve`]: priority resolution (Annex 28B.3, the seed's Table 1), parallel detection and
//!   forced modes, and the classification of the outcome.
//! * [`verdict`]: the outcome as a typed verdict and its sentence.
//!
//! The technologies are those of the seed's Table 1. 1000BASE-T and 100BASE-T2 abilities are
//! not in the base page: they travel in next pages (Clause 40.5.1.2 and Clause 32), which is
//! why a 1000BASE-T port sets the Next Page bit of its base page.

pub mod codeword;
pub mod resolve;
pub mod verdict;

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

pub use crate::envelope::Duplex;
pub use codeword::{BasePage, CodeWordError, LinkCodeWord, Selector};
pub use resolve::{
    Config, End, EndState, HowResolved, Outcome, Partner, PartnerError, Resolution, duplex_word,
    resolve,
};
pub use verdict::{AutonegVerdict, verdict};

/// One twisted-pair technology that auto-negotiation can select.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Technology {
    /// 10BASE-T, half duplex (Clause 14).
    Base10THalf,
    /// 10BASE-T, full duplex.
    Base10TFull,
    /// 100BASE-TX, half duplex (Clause 25).
    Base100TxHalf,
    /// 100BASE-TX, full duplex.
    Base100TxFull,
    /// 100BASE-T4 (Clause 23), half duplex only.
    Base100T4,
    /// 100BASE-T2 (Clause 32), half duplex.
    Base100T2Half,
    /// 100BASE-T2, full duplex.
    Base100T2Full,
    /// 1000BASE-T (Clause 40), half duplex.
    Base1000THalf,
    /// 1000BASE-T, full duplex.
    Base1000TFull,
}

/// The physical signalling a technology uses; parallel detection recognises a partner by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pma {
    /// 10BASE-T: normal link pulses when idle.
    Base10T,
    /// 100BASE-TX: scrambled idle symbols on two pairs.
    Base100Tx,
    /// 100BASE-T4: four pairs.
    Base100T4,
    /// 100BASE-T2: two pairs, PAM5.
    Base100T2,
    /// 1000BASE-T: four pairs, PAM5, master/slave timing settled by auto-negotiation.
    Base1000T,
}

impl Technology {
    /// Every technology, highest priority first: Annex 28B.3, the seed's Table 1.
    pub const BY_PRIORITY: [Technology; 9] = [
        Technology::Base1000TFull,
        Technology::Base1000THalf,
        Technology::Base100T2Full,
        Technology::Base100TxFull,
        Technology::Base100T2Half,
        Technology::Base100T4,
        Technology::Base100TxHalf,
        Technology::Base10TFull,
        Technology::Base10THalf,
    ];

    /// Rank in the priority resolution table: 1 is chosen first, 9 last.
    pub fn priority(self) -> u8 {
        let index = Technology::BY_PRIORITY
            .iter()
            .position(|&t| t == self)
            .expect("every technology is in the table");
        index as u8 + 1
    }

    /// Line rate in Mbit/s.
    pub fn speed_mbps(self) -> u32 {
        match self.pma() {
            Pma::Base10T => 10,
            Pma::Base100Tx | Pma::Base100T4 | Pma::Base100T2 => 100,
            Pma::Base1000T => 1000,
        }
    }

    /// Half or full duplex.
    pub fn duplex(self) -> Duplex {
        use Technology::*;
        match self {
            Base10TFull | Base100TxFull | Base100T2Full | Base1000TFull => Duplex::Full,
            Base10THalf | Base100TxHalf | Base100T4 | Base100T2Half | Base1000THalf => Duplex::Half,
        }
    }

    /// The physical signalling.
    pub fn pma(self) -> Pma {
        use Technology::*;
        match self {
            Base10THalf | Base10TFull => Pma::Base10T,
            Base100TxHalf | Base100TxFull => Pma::Base100Tx,
            Base100T4 => Pma::Base100T4,
            Base100T2Half | Base100T2Full => Pma::Base100T2,
            Base1000THalf | Base1000TFull => Pma::Base1000T,
        }
    }

    /// The same signalling in half duplex: what parallel detection settles on.
    pub fn half_duplex(self) -> Technology {
        match self.pma() {
            Pma::Base10T => Technology::Base10THalf,
            Pma::Base100Tx => Technology::Base100TxHalf,
            Pma::Base100T4 => Technology::Base100T4,
            Pma::Base100T2 => Technology::Base100T2Half,
            Pma::Base1000T => Technology::Base1000THalf,
        }
    }

    /// The standard's name: "100BASE-TX full duplex", "10BASE-T".
    pub fn name(self) -> &'static str {
        use Technology::*;
        match self {
            Base10THalf => "10BASE-T",
            Base10TFull => "10BASE-T full duplex",
            Base100TxHalf => "100BASE-TX",
            Base100TxFull => "100BASE-TX full duplex",
            Base100T4 => "100BASE-T4",
            Base100T2Half => "100BASE-T2",
            Base100T2Full => "100BASE-T2 full duplex",
            Base1000THalf => "1000BASE-T",
            Base1000TFull => "1000BASE-T full duplex",
        }
    }

    /// The short form users type and the seed prints: "100-full", "10-half", "100-t4".
    pub fn short(self) -> &'static str {
        use Technology::*;
        match self {
            Base10THalf => "10-half",
            Base10TFull => "10-full",
            Base100TxHalf => "100-half",
            Base100TxFull => "100-full",
            Base100T4 => "100-t4",
            Base100T2Half => "100-t2-half",
            Base100T2Full => "100-t2-full",
            Base1000THalf => "1000-half",
            Base1000TFull => "1000-full",
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for Technology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Technology {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.short())
    }
}

/// Read back from the short name it is written as (`100-full`), for saved documents.
impl<'de> serde::Deserialize<'de> for Technology {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Technology, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Why a mode or a set of modes did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModeError {
    /// Not a speed and duplex.
    #[error(
        "{text:?} is not a link mode; expected a speed and duplex such as 100-full, 10half, 1000/full or 100-t4"
    )]
    Unknown {
        /// What was given.
        text: String,
    },
    /// An empty set of modes.
    #[error("no link modes given; expected a list such as 10-half,100-full or 10/100")]
    Empty,
}

impl FromStr for Technology {
    type Err = ModeError;

    fn from_str(text: &str) -> Result<Technology, ModeError> {
        let unknown = || ModeError::Unknown {
            text: text.to_string(),
        };
        let lower = text.trim().to_ascii_lowercase();
        let squeezed: String = lower
            .chars()
            .filter(|c| !matches!(c, '-' | '/' | '_' | ' '))
            .collect();
        let squeezed = squeezed
            .replace("mbps", "")
            .replace("mbit", "")
            .replace("duplex", "");
        let t = match squeezed.as_str() {
            "10half" | "10hd" | "10h" | "10baset" | "10basethalf" => Technology::Base10THalf,
            "10full" | "10fd" | "10f" | "10basetfull" => Technology::Base10TFull,
            "100half" | "100hd" | "100h" | "100basetx" | "100basetxhalf" => {
                Technology::Base100TxHalf
            }
            "100full" | "100fd" | "100f" | "100basetxfull" => Technology::Base100TxFull,
            "100t4" | "100baset4" => Technology::Base100T4,
            "100t2half" | "100t2" | "100baset2" | "100baset2half" => Technology::Base100T2Half,
            "100t2full" | "100baset2full" => Technology::Base100T2Full,
            "1000half" | "1000hd" | "1000h" | "1000baset" | "1000basethalf" => {
                Technology::Base1000THalf
            }
            "1000full" | "1000fd" | "1000f" | "1000basetfull" => Technology::Base1000TFull,
            _ => return Err(unknown()),
        };
        Ok(t)
    }
}

/// A set of technologies: what a port advertises, or what its hardware can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Abilities(u16);

impl Abilities {
    /// No technology at all.
    pub const NONE: Abilities = Abilities(0);

    /// 10BASE-T and 100BASE-TX, half and full duplex: the Fast Ethernet port of the seed's
    /// Appendix A ("maximum capability ... is 100 full-duplex").
    pub fn fast_ethernet() -> Abilities {
        Abilities::from_iter([
            Technology::Base10THalf,
            Technology::Base10TFull,
            Technology::Base100TxHalf,
            Technology::Base100TxFull,
        ])
    }

    /// A gigabit copper port: 10/100/1000, half and full duplex.
    pub fn gigabit() -> Abilities {
        Abilities::fast_ethernet()
            .with(Technology::Base1000THalf)
            .with(Technology::Base1000TFull)
    }

    /// This set plus one technology.
    pub fn with(self, t: Technology) -> Abilities {
        Abilities(self.0 | t.bit())
    }

    /// Whether the set holds `t`.
    pub fn contains(self, t: Technology) -> bool {
        self.0 & t.bit() != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The technologies in both sets.
    pub fn intersection(self, other: Abilities) -> Abilities {
        Abilities(self.0 & other.0)
    }

    /// The technologies of either set.
    pub fn union(self, other: Abilities) -> Abilities {
        Abilities(self.0 | other.0)
    }

    /// The highest-priority technology of the set (Annex 28B.3): the highest common
    /// denominator when the set is an intersection.
    pub fn best(self) -> Option<Technology> {
        Technology::BY_PRIORITY
            .into_iter()
            .find(|&t| self.contains(t))
    }

    /// Whether any technology of the set uses this signalling.
    pub fn has_pma(self, pma: Pma) -> bool {
        self.iter().any(|t| t.pma() == pma)
    }

    /// The technologies, highest priority first.
    pub fn iter(self) -> impl Iterator<Item = Technology> {
        Technology::BY_PRIORITY
            .into_iter()
            .filter(move |&t| self.contains(t))
    }
}

impl FromIterator<Technology> for Abilities {
    fn from_iter<I: IntoIterator<Item = Technology>>(iter: I) -> Abilities {
        iter.into_iter().fold(Abilities::NONE, Abilities::with)
    }
}

impl fmt::Display for Abilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        let names: Vec<&str> = self.iter().map(Technology::short).collect();
        f.write_str(&names.join(","))
    }
}

impl Serialize for Abilities {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl FromStr for Abilities {
    type Err = ModeError;

    /// A comma-separated list of modes (`10-half,100-full`), or a speed family: `10/100` is
    /// 10 and 100 Mbit/s in both duplexes, `10/100/1000` adds 1000BASE-T.
    fn from_str(text: &str) -> Result<Abilities, ModeError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ModeError::Empty);
        }
        match text {
            "10/100" => return Ok(Abilities::fast_ethernet()),
            "10/100/1000" => return Ok(Abilities::gigabit()),
            _ => {}
        }
        text.split(',')
            .map(|part| part.trim().parse::<Technology>())
            .collect()
    }
}
