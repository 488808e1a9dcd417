//! The base-page link code word (IEEE 802.3 Clause 28.2.1.2): sixteen bits that a port sends in
//! every Fast Link Pulse burst, and that Linux shows as MII register 4 (advertisement) and
//! register 5 (link partner ability).
//!
//! ```text
//!  D15 D14 D13 D12 D11 D10 D9  D8  D7  D6  D5  D4  D3  D2  D1  D0
//!  NP  Ack RF  A7  A6  A5  A4  A3  A2  A1  A0  S4  S3  S2  S1  S0
//! ```
//!
//! S4..S0 is the selector field (Annex 28A: 00001 is IEEE 802.3), A7..A0 the technology
//! ability field (Annex 28B.2 for the 802.3 selector: A0 10BASE-T, A1 10BASE-T full duplex,
//! A2 100BASE-TX, A3 100BASE-TX full duplex, A4 100BASE-T4, A5 PAUSE, A6 asymmetric PAUSE,
//! A7 reserved), RF remote fault, Ack acknowledge (set once three consistent bursts have been
//! received, seed 003 §3.4), NP next page (more pages follow: 1000BASE-T abilities are sent
//! that way). The seed's example "11110000" (A0..A3 set) is the word 0x01E1.
//!
//! [`LinkCodeWord`] is a typed view over the 16 bits (getters and setters per field);
//! [`BasePage`] is its parsed form with `parse` and `emit`, such that every one of the 65,536
//! words survives `emit(parse(w)) == w`.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

use super::{Abilities, Technology};

mod field {
    pub(super) const SELECTOR: u16 = 0x001F;
    pub(super) const TECHNOLOGY: u16 = 0x1FE0;
    pub(super) const TECHNOLOGY_SHIFT: u32 = 5;
    pub(super) const REMOTE_FAULT: u16 = 1 << 13;
    pub(super) const ACKNOWLEDGE: u16 = 1 << 14;
    pub(super) const NEXT_PAGE: u16 = 1 << 15;
}

/// Technology ability bits of the IEEE 802.3 selector (Annex 28B.2), A0 first.
pub mod ability {
    /// A0: 10BASE-T.
    pub const BASE10T: u8 = 1 << 0;
    /// A1: 10BASE-T full duplex.
    pub const BASE10T_FULL: u8 = 1 << 1;
    /// A2: 100BASE-TX.
    pub const BASE100TX: u8 = 1 << 2;
    /// A3: 100BASE-TX full duplex.
    pub const BASE100TX_FULL: u8 = 1 << 3;
    /// A4: 100BASE-T4.
    pub const BASE100T4: u8 = 1 << 4;
    /// A5: symmetric PAUSE (802.3x flow control).
    pub const PAUSE: u8 = 1 << 5;
    /// A6: asymmetric PAUSE.
    pub const ASYM_PAUSE: u8 = 1 << 6;
    /// A7: reserved for future technology.
    pub const RESERVED: u8 = 1 << 7;
}

/// The meaning of each technology ability bit under the 802.3 selector, A0 first.
const ABILITY_MEANINGS: [&str; 8] = [
    "10BASE-T",
    "10BASE-T full duplex",
    "100BASE-TX",
    "100BASE-TX full duplex",
    "100BASE-T4",
    "PAUSE (symmetric flow control)",
    "asymmetric PAUSE",
    "reserved",
];

/// The technologies that have a bit in the base page, in A0..A4 order.
const BASE_PAGE_TECHNOLOGIES: [(u8, Technology); 5] = [
    (ability::BASE10T, Technology::Base10THalf),
    (ability::BASE10T_FULL, Technology::Base10TFull),
    (ability::BASE100TX, Technology::Base100TxHalf),
    (ability::BASE100TX_FULL, Technology::Base100TxFull),
    (ability::BASE100T4, Technology::Base100T4),
];

/// A 16-bit link code word, read and written field by field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LinkCodeWord(u16);

impl LinkCodeWord {
    /// The word with these bits (D0 is bit 0).
    pub const fn new(bits: u16) -> LinkCodeWord {
        LinkCodeWord(bits)
    }

    /// The raw bits.
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// S4..S0.
    pub fn selector(self) -> u8 {
        (self.0 & field::SELECTOR) as u8
    }

    /// A7..A0, A0 in bit 0.
    pub fn technology(self) -> u8 {
        ((self.0 & field::TECHNOLOGY) >> field::TECHNOLOGY_SHIFT) as u8
    }

    /// RF.
    pub fn remote_fault(self) -> bool {
        self.0 & field::REMOTE_FAULT != 0
    }

    /// Ack.
    pub fn acknowledge(self) -> bool {
        self.0 & field::ACKNOWLEDGE != 0
    }

    /// NP.
    pub fn next_page(self) -> bool {
        self.0 & field::NEXT_PAGE != 0
    }

    /// Sets S4..S0 (the value is masked to five bits).
    pub fn set_selector(&mut self, value: u8) {
        self.0 = (self.0 & !field::SELECTOR) | (u16::from(value) & field::SELECTOR);
    }

    /// Sets A7..A0.
    pub fn set_technology(&mut self, value: u8) {
        self.0 = (self.0 & !field::TECHNOLOGY) | (u16::from(value) << field::TECHNOLOGY_SHIFT);
    }

    /// Sets RF.
    pub fn set_remote_fault(&mut self, on: bool) {
        self.set_flag(field::REMOTE_FAULT, on);
    }

    /// Sets Ack.
    pub fn set_acknowledge(&mut self, on: bool) {
        self.set_flag(field::ACKNOWLEDGE, on);
    }

    /// Sets NP.
    pub fn set_next_page(&mut self, on: bool) {
        self.set_flag(field::NEXT_PAGE, on);
    }

    fn set_flag(&mut self, mask: u16, on: bool) {
        if on {
            self.0 |= mask;
        } else {
            self.0 &= !mask;
        }
    }
}

impl fmt::Display for LinkCodeWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:04X}", self.0)
    }
}

impl Serialize for LinkCodeWord {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Why a link code word did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodeWordError {
    /// Not hexadecimal (or binary with `0b`).
    #[error(
        "{text:?} is not a link code word; expected 16 bits in hex such as 0x01E1 (or binary such as 0b0000000111100001)"
    )]
    NotANumber {
        /// What was given.
        text: String,
    },
    /// More than 16 bits.
    #[error("{text:?} does not fit the 16 bits of a link code word; the largest is 0xFFFF")]
    TooWide {
        /// What was given.
        text: String,
    },
}

impl FromStr for LinkCodeWord {
    type Err = CodeWordError;

    /// Hex with or without `0x` (`0x01E1`, `01e1`), or binary with `0b`; `_` and spaces
    /// between digits are ignored.
    fn from_str(text: &str) -> Result<LinkCodeWord, CodeWordError> {
        let cleaned: String = text
            .trim()
            .chars()
            .filter(|c| !matches!(c, '_' | ' '))
            .collect();
        let lower = cleaned.to_ascii_lowercase();
        let (digits, radix) = if let Some(rest) = lower.strip_prefix("0b") {
            (rest, 2)
        } else {
            (lower.strip_prefix("0x").unwrap_or(&lower), 16)
        };
        let not_a_number = || CodeWordError::NotANumber {
            text: text.to_string(),
        };
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return Err(not_a_number());
        }
        let value = u64::from_str_radix(digits.trim_start_matches('0'), radix).or_else(|_| {
            if digits.trim_start_matches('0').is_empty() {
                Ok(0)
            } else {
                Err(CodeWordError::TooWide {
                    text: text.to_string(),
                })
            }
        })?;
        u16::try_from(value)
            .map(LinkCodeWord)
            .map_err(|_| CodeWordError::TooWide {
                text: text.to_string(),
            })
    }
}

/// The selector field: which standard's message the technology ability field holds (Annex 28A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Selector {
    /// 00001: IEEE 802.3.
    Ieee8023,
    /// 00010: IEEE 802.9 ISLAN-16T.
    Ieee8029,
    /// 00011: IEEE 802.5.
    Ieee8025,
    /// 00100: IEEE 1394.
    Ieee1394,
    /// Any other value: reserved for future use.
    Reserved(u8),
}

impl Selector {
    /// From the five bits S4..S0.
    pub fn from_bits(value: u8) -> Selector {
        match value & 0x1F {
            1 => Selector::Ieee8023,
            2 => Selector::Ieee8029,
            3 => Selector::Ieee8025,
            4 => Selector::Ieee1394,
            other => Selector::Reserved(other),
        }
    }

    /// The five bits S4..S0.
    pub fn bits(self) -> u8 {
        match self {
            Selector::Ieee8023 => 1,
            Selector::Ieee8029 => 2,
            Selector::Ieee8025 => 3,
            Selector::Ieee1394 => 4,
            Selector::Reserved(v) => v & 0x1F,
        }
    }

    /// The standard's name.
    pub fn name(self) -> &'static str {
        match self {
            Selector::Ieee8023 => "IEEE 802.3",
            Selector::Ieee8029 => "IEEE 802.9 ISLAN-16T",
            Selector::Ieee8025 => "IEEE 802.5",
            Selector::Ieee1394 => "IEEE 1394",
            Selector::Reserved(_) => "reserved",
        }
    }
}

impl Serialize for Selector {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Selector", 2)?;
        st.serialize_field("value", &self.bits())?;
        st.serialize_field("name", self.name())?;
        st.end()
    }
}

/// One field of a decoded word, for the bit-by-bit description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldRow {
    /// The field's name in the standard: "S4..S0", "A3", "Ack".
    pub field: &'static str,
    /// Which bits of the word: "D0-D4", "D8".
    pub bits: &'static str,
    /// The value, in binary.
    pub value: String,
    /// What it means.
    pub meaning: String,
}

/// A base page, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct BasePage {
    /// S4..S0.
    pub selector: Selector,
    /// A7..A0 as sent (A0 in bit 0); its meaning depends on the selector.
    pub technology_bits: u8,
    /// RF: the sender has a fault to report.
    pub remote_fault: bool,
    /// Ack: the sender has received the partner's word (three consistent bursts).
    pub acknowledge: bool,
    /// NP: next pages follow.
    pub next_page: bool,
}

impl BasePage {
    /// Reads every field of the word. Every 16-bit value is a base page.
    pub fn parse(word: LinkCodeWord) -> BasePage {
        BasePage {
            selector: Selector::from_bits(word.selector()),
            technology_bits: word.technology(),
            remote_fault: word.remote_fault(),
            acknowledge: word.acknowledge(),
            next_page: word.next_page(),
        }
    }

    /// Writes the word.
    pub fn emit(&self) -> LinkCodeWord {
        let mut word = LinkCodeWord::default();
        word.set_selector(self.selector.bits());
        word.set_technology(self.technology_bits);
        word.set_remote_fault(self.remote_fault);
        word.set_acknowledge(self.acknowledge);
        word.set_next_page(self.next_page);
        word
    }

    /// The IEEE 802.3 base page that advertises `abilities`. 1000BASE-T and 100BASE-T2 have no
    /// base-page bit; advertising them sets Next Page, as a real port does.
    pub fn advertising(abilities: Abilities, pause: bool, asym_pause: bool) -> BasePage {
        let mut bits = 0u8;
        for (bit, t) in BASE_PAGE_TECHNOLOGIES {
            if abilities.contains(t) {
                bits |= bit;
            }
        }
        if pause {
            bits |= ability::PAUSE;
        }
        if asym_pause {
            bits |= ability::ASYM_PAUSE;
        }
        let next_page = abilities
            .iter()
            .any(|t| !BASE_PAGE_TECHNOLOGIES.iter().any(|&(_, base)| base == t));
        BasePage {
            selector: Selector::Ieee8023,
            technology_bits: bits,
            remote_fault: false,
            acknowledge: false,
            next_page,
        }
    }

    /// The technologies this page advertises, if its selector is IEEE 802.3.
    pub fn abilities(&self) -> Option<Abilities> {
        (self.selector == Selector::Ieee8023).then(|| {
            BASE_PAGE_TECHNOLOGIES
                .iter()
                .filter(|&&(bit, _)| self.technology_bits & bit != 0)
                .map(|&(_, t)| t)
                .collect()
        })
    }

    /// Symmetric PAUSE advertised (802.3 selector only).
    pub fn pause(&self) -> bool {
        self.selector == Selector::Ieee8023 && self.technology_bits & ability::PAUSE != 0
    }

    /// Asymmetric PAUSE advertised (802.3 selector only).
    pub fn asym_pause(&self) -> bool {
        self.selector == Selector::Ieee8023 && self.technology_bits & ability::ASYM_PAUSE != 0
    }

    /// The word bit by bit, most significant field last, with the meaning of each.
    pub fn fields(&self) -> Vec<FieldRow> {
        const A_BITS: [(&str, &str); 8] = [
            ("A0", "D5"),
            ("A1", "D6"),
            ("A2", "D7"),
            ("A3", "D8"),
            ("A4", "D9"),
            ("A5", "D10"),
            ("A6", "D11"),
            ("A7", "D12"),
        ];
        let yes_no = |on: bool| if on { "1" } else { "0" }.to_string();
        let mut rows = vec![FieldRow {
            field: "S4..S0",
            bits: "D4-D0",
            value: format!("{:05b}", self.selector.bits()),
            meaning: format!("selector: {}", self.selector.name()),
        }];
        for (i, (field, bits)) in A_BITS.into_iter().enumerate() {
            let on = self.technology_bits & (1 << i) != 0;
            let meaning = if self.selector == Selector::Ieee8023 {
                ABILITY_MEANINGS[i].to_string()
            } else {
                format!("technology bit {i} of the {} message", self.selector.name())
            };
            rows.push(FieldRow {
                field,
                bits,
                value: yes_no(on),
                meaning,
            });
        }
        rows.push(FieldRow {
            field: "RF",
            bits: "D13",
            value: yes_no(self.remote_fault),
            meaning: "remote fault".to_string(),
        });
        rows.push(FieldRow {
            field: "Ack",
            bits: "D14",
            value: yes_no(self.acknowledge),
            meaning: "acknowledge (partner's word received)".to_string(),
        });
        rows.push(FieldRow {
            field: "NP",
            bits: "D15",
            value: yes_no(self.next_page),
            meaning: "next page (more pages follow)".to_string(),
        });
        rows
    }

    /// One sentence: "IEEE 802.3: 100BASE-TX full duplex, 100BASE-TX, ...; PAUSE; no remote
    /// fault; not acknowledged; no next page".
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        match self.abilities() {
            Some(abilities) => {
                let names: Vec<&str> = abilities.iter().map(Technology::name).collect();
                let techs = if names.is_empty() {
                    "no technology".to_string()
                } else {
                    names.join(", ")
                };
                parts.push(format!("{}: {techs}", self.selector.name()));
                if self.pause() {
                    parts.push("PAUSE".to_string());
                }
                if self.asym_pause() {
                    parts.push("asymmetric PAUSE".to_string());
                }
                if self.technology_bits & ability::RESERVED != 0 {
                    parts.push("reserved bit A7 set".to_string());
                }
            }
            None => parts.push(format!(
                "{} selector {:05b}: technology bits {:08b} (not 802.3 abilities)",
                self.selector.name(),
                self.selector.bits(),
                self.technology_bits
            )),
        }
        parts.push(
            if self.remote_fault {
                "remote fault"
            } else {
                "no remote fault"
            }
            .into(),
        );
        parts.push(
            if self.acknowledge {
                "acknowledged"
            } else {
                "not acknowledged"
            }
            .into(),
        );
        parts.push(
            if self.next_page {
                "next page follows"
            } else {
                "no next page"
            }
            .into(),
        );
        parts.join("; ")
    }
}
