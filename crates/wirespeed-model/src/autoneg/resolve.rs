//! What two link partners end up running (IEEE 802.3 Clause 28.2.3, the seed's §3.4-3.5 and
//! Appendix A).
//!
//! * Both ends auto-negotiate: each selects the highest common denominator of the two
//!   advertisements by the priority table of Annex 28B.3 (the seed's Table 1). Nothing in
//!   common: no link.
//! * One end is forced: the negotiating end sees no Fast Link Pulses and falls back on
//!   parallel detection (28.2.3.1), which recognises 10BASE-T (normal link pulses),
//!   100BASE-TX and 100BASE-T4 by their signalling and sets the link to *half duplex* whatever
//!   the partner runs. It works only for a signalling the negotiating end supports (here: any
//!   technology it advertises with that signalling).
//! * Both ends forced: a link comes up when the two use the same signalling; each runs the
//!   duplex it was told.
//! * A speed mismatch never links: "Neither side will establish link" (Appendix A).
//!
//! 1000BASE-T cannot be forced: Clause 40.5.1 makes auto-negotiation mandatory for it (master
//! and slave are settled there). Forcing 1000 Mbit/s is modelled as Linux drivers do it: the port
//! auto-negotiates and advertises only the forced mode.
//!
//! The outcome is classified as the seed does in its "Expected Mismatch" columns: ok, duplex
//! mismatch (which end is half), no link, or slower than both ends could do (when the ends'
//! capabilities, by default what their configuration shows, allow a better mode).

use serde::{Deserialize, Serialize};

use super::{Abilities, Duplex, Pma, Technology};

/// How one end is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum Config {
    /// Auto-negotiation, advertising these technologies.
    Auto {
        /// What the end advertises.
        advertised: Abilities,
    },
    /// Auto-negotiation off; this one technology.
    Forced {
        /// The forced mode.
        technology: Technology,
    },
}

/// One link partner: its configuration and what its hardware could do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Partner {
    /// How it is configured.
    pub config: Config,
    /// What the hardware can do; by default what its configuration shows (the advertisement,
    /// or the forced mode alone).
    pub capable: Abilities,
}

impl Partner {
    /// An auto-negotiating end advertising `advertised`.
    pub fn auto(advertised: Abilities) -> Partner {
        Partner {
            config: Config::Auto { advertised },
            capable: advertised,
        }
    }

    /// An end forced to `technology`.
    pub fn forced(technology: Technology) -> Partner {
        Partner {
            config: Config::Forced { technology },
            capable: Abilities::NONE.with(technology),
        }
    }

    /// The same end, with hardware that can do `capable` (the configured modes are added).
    pub fn capable_of(self, capable: Abilities) -> Partner {
        let configured = match self.config {
            Config::Auto { advertised } => advertised,
            Config::Forced { technology } => Abilities::NONE.with(technology),
        };
        Partner {
            capable: capable.union(configured),
            ..self
        }
    }

    /// The configuration as the line sees it: forced 1000BASE-T still negotiates.
    pub fn effective(self) -> Config {
        match self.config {
            Config::Forced { technology } if technology.pma() == Pma::Base1000T => Config::Auto {
                advertised: Abilities::NONE.with(technology),
            },
            config => config,
        }
    }

    /// "auto (10-half,...)" or "forced 100-full".
    pub fn describe(&self) -> String {
        match self.config {
            Config::Auto { advertised } => format!("auto-negotiation, advertising {advertised}"),
            Config::Forced { technology } => format!("forced {}", technology.short()),
        }
    }
}

/// Why a partner description did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PartnerError {
    /// Neither `auto...` nor a mode.
    #[error(
        "{text:?} is not a link partner; expected auto, auto:10/100, auto:10-half,100-full, auto:0x01E1 (a link code word) or a forced mode such as 100-full or 10-half"
    )]
    Unknown {
        /// What was given.
        text: String,
    },
    /// A link code word whose selector is not IEEE 802.3, or that advertises nothing.
    #[error(
        "link code word {word} advertises no IEEE 802.3 technology; try 0x01E1 (10/100, half and full)"
    )]
    NoTechnology {
        /// The word.
        word: String,
    },
}

impl std::str::FromStr for Partner {
    type Err = PartnerError;

    /// `auto` (10/100 in both duplexes, the seed's Appendix A port), `auto:MODES`
    /// (`auto:10/100/1000`, `auto:10-half,100-full`), `auto:0x01E1` (the advertisement as a link
    /// code word), or a forced mode (`100-full`, `10half`, `1000/full`).
    fn from_str(text: &str) -> Result<Partner, PartnerError> {
        let unknown = || PartnerError::Unknown {
            text: text.to_string(),
        };
        let lower = text.trim().to_ascii_lowercase();
        if lower == "auto" {
            return Ok(Partner::auto(Abilities::fast_ethernet()));
        }
        if let Some(rest) = lower
            .strip_prefix("auto:")
            .or_else(|| lower.strip_prefix("auto="))
        {
            if let Ok(word) = rest.parse::<super::LinkCodeWord>()
                && (rest.starts_with("0x") || rest.starts_with("0b"))
            {
                let page = super::BasePage::parse(word);
                return match page.abilities() {
                    Some(a) if !a.is_empty() => Ok(Partner::auto(a)),
                    _ => Err(PartnerError::NoTechnology {
                        word: word.to_string(),
                    }),
                };
            }
            return rest
                .parse::<Abilities>()
                .map(Partner::auto)
                .map_err(|_| unknown());
        }
        lower
            .parse::<Technology>()
            .map(Partner::forced)
            .map_err(|_| unknown())
    }
}

/// One of the two ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// The first partner given.
    A,
    /// The second partner given.
    B,
}

/// How an end arrived at its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HowResolved {
    /// Priority resolution of two advertisements.
    Negotiated,
    /// Parallel detection of a partner that sent no Fast Link Pulses: half duplex.
    ParallelDetection,
    /// Configured by hand.
    Forced,
    /// No link came up.
    NoLink,
}

/// What one end runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndState {
    /// The technology in use; `None` without a link.
    pub technology: Option<Technology>,
    /// Speed in Mbit/s, `None` without a link.
    pub speed_mbps: Option<u32>,
    /// Duplex, `None` without a link.
    pub duplex: Option<Duplex>,
    /// How it got there.
    pub how: HowResolved,
}

impl EndState {
    fn up(technology: Technology, how: HowResolved) -> EndState {
        EndState {
            technology: Some(technology),
            speed_mbps: Some(technology.speed_mbps()),
            duplex: Some(technology.duplex()),
            how,
        }
    }

    fn down() -> EndState {
        EndState {
            technology: None,
            speed_mbps: None,
            duplex: None,
            how: HowResolved::NoLink,
        }
    }

    /// "100 Mbit/s full duplex" or "no link".
    pub fn describe(&self) -> String {
        match (self.speed_mbps, self.duplex) {
            (Some(speed), Some(duplex)) => format!("{speed} Mbit/s {}", duplex_word(duplex)),
            _ => "no link".to_string(),
        }
    }
}

/// Half or full, as a word.
pub fn duplex_word(duplex: Duplex) -> &'static str {
    match duplex {
        Duplex::Full => "full duplex",
        Duplex::Half => "half duplex",
    }
}

/// The class of a resolution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "class")]
pub enum Outcome {
    /// Both ends run the same mode, the best both can do.
    Ok,
    /// Same speed, different duplex: one end half, the other full.
    DuplexMismatch {
        /// The end that runs half duplex (it sees late collisions; the full end sees FCS
        /// errors and runts).
        half_duplex_end: End,
    },
    /// No link.
    NoLink {
        /// Why.
        reason: String,
    },
    /// A working link below the best mode both ends are capable of.
    SlowerThanPossible {
        /// The mode in use.
        running: Technology,
        /// The best mode both could run.
        possible: Technology,
    },
}

/// The result of two partners meeting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resolution {
    /// What end A runs.
    pub a: EndState,
    /// What end B runs.
    pub b: EndState,
    /// The class.
    pub outcome: Outcome,
    /// The best mode both ends' hardware could run (highest common denominator of their
    /// capabilities), if any.
    pub best_possible: Option<Technology>,
    /// Sentences on how the result came about.
    pub notes: Vec<String>,
}

/// Resolves the link between `a` and `b`.
pub fn resolve(a: Partner, b: Partner) -> Resolution {
    let mut notes = Vec::new();
    for (end, p) in [(End::A, a), (End::B, b)] {
        if let Config::Forced { technology } = p.config
            && technology.pma() == Pma::Base1000T
        {
            notes.push(format!(
                "{end:?}: 1000BASE-T cannot run without auto-negotiation (Clause 40.5.1); forcing it means advertising {} alone",
                technology.short()
            ));
        }
    }
    let (state_a, state_b, no_link_reason) = match (a.effective(), b.effective()) {
        (Config::Auto { advertised: x }, Config::Auto { advertised: y }) => {
            match x.intersection(y).best() {
                Some(t) => {
                    notes.push(format!(
                        "both ends negotiate: highest common technology {} (priority {} of 9)",
                        t.name(),
                        t.priority()
                    ));
                    (
                        EndState::up(t, HowResolved::Negotiated),
                        EndState::up(t, HowResolved::Negotiated),
                        None,
                    )
                }
                None => (
                    EndState::down(),
                    EndState::down(),
                    Some(format!(
                        "the advertisements ({x} and {y}) have no technology in common"
                    )),
                ),
            }
        }
        (Config::Auto { advertised }, Config::Forced { technology }) => {
            let (auto, forced, reason) =
                parallel_detect(advertised, technology, End::A, &mut notes);
            (auto, forced, reason)
        }
        (Config::Forced { technology }, Config::Auto { advertised }) => {
            let (auto, forced, reason) =
                parallel_detect(advertised, technology, End::B, &mut notes);
            (forced, auto, reason)
        }
        (Config::Forced { technology: s }, Config::Forced { technology: t }) => {
            if s.pma() == t.pma() {
                notes.push("both ends forced: each runs the duplex it was given".to_string());
                (
                    EndState::up(s, HowResolved::Forced),
                    EndState::up(t, HowResolved::Forced),
                    None,
                )
            } else {
                (
                    EndState::down(),
                    EndState::down(),
                    Some(mismatch_reason(s, t)),
                )
            }
        }
    };
    let best_possible = a.capable.intersection(b.capable).best();
    let outcome = match (no_link_reason, state_a.technology, state_b.technology) {
        (Some(reason), _, _) => Outcome::NoLink { reason },
        (None, Some(ta), Some(tb)) if ta.duplex() != tb.duplex() => Outcome::DuplexMismatch {
            half_duplex_end: if ta.duplex() == Duplex::Half {
                End::A
            } else {
                End::B
            },
        },
        (None, Some(running), Some(_)) => match best_possible {
            Some(possible) if possible.priority() < running.priority() => {
                Outcome::SlowerThanPossible { running, possible }
            }
            _ => Outcome::Ok,
        },
        (None, _, _) => unreachable!("a link without a reason for its absence has both ends up"),
    };
    Resolution {
        a: state_a,
        b: state_b,
        outcome,
        best_possible,
        notes,
    }
}

/// The negotiating end meets a forced one; returns (negotiating end, forced end, no-link reason).
fn parallel_detect(
    advertised: Abilities,
    forced: Technology,
    auto_end: End,
    notes: &mut Vec<String>,
) -> (EndState, EndState, Option<String>) {
    let detectable = matches!(forced.pma(), Pma::Base10T | Pma::Base100Tx | Pma::Base100T4);
    if !detectable || !advertised.has_pma(forced.pma()) {
        let reason = if !detectable {
            format!(
                "parallel detection cannot recognise {} (only 10BASE-T, 100BASE-TX and 100BASE-T4)",
                forced.name()
            )
        } else {
            format!(
                "the negotiating end ({auto_end:?}) advertises nothing at {} Mbit/s ({advertised}), so it cannot detect a partner forced to {}",
                forced.speed_mbps(),
                forced.short()
            )
        };
        return (EndState::down(), EndState::down(), Some(reason));
    }
    let detected = forced.half_duplex();
    notes.push(format!(
        "{auto_end:?} sees no Fast Link Pulses: parallel detection finds {} Mbit/s and sets half duplex (Clause 28.2.3.1), whatever its partner runs",
        forced.speed_mbps()
    ));
    (
        EndState::up(detected, HowResolved::ParallelDetection),
        EndState::up(forced, HowResolved::Forced),
        None,
    )
}

fn mismatch_reason(s: Technology, t: Technology) -> String {
    if s.speed_mbps() != t.speed_mbps() {
        format!(
            "speed mismatch: {} against {}; neither side will establish link",
            s.short(),
            t.short()
        )
    } else {
        format!(
            "{} and {} use different signalling; neither side will establish link",
            s.name(),
            t.name()
        )
    }
}
