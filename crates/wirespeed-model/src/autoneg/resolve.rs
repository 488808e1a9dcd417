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
    fn effective(self) -> Config {
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

#[cfg(test)]
mod tests {
    use super::*;
    use Technology::*;

    fn auto() -> Partner {
        Partner::auto(Abilities::fast_ethernet())
    }

    fn forced(t: Technology) -> Partner {
        Partner::forced(t)
    }

    /// Asserts one row of the seed's Appendix A (NIC = A, Catalyst switch = B).
    fn row(
        nic: Partner,
        switch: Partner,
        want_nic: Option<Technology>,
        want_switch: Option<Technology>,
    ) -> Resolution {
        let r = resolve(nic, switch);
        assert_eq!(r.a.technology, want_nic, "NIC: {r:?}");
        assert_eq!(r.b.technology, want_switch, "switch: {r:?}");
        r
    }

    #[test]
    fn seed_003_appendix_a_row1_auto_auto() {
        let r = row(auto(), auto(), Some(Base100TxFull), Some(Base100TxFull));
        assert_eq!(r.outcome, Outcome::Ok);
        assert_eq!(r.a.how, HowResolved::Negotiated);
    }

    #[test]
    fn seed_003_appendix_a_row2_forced_full_against_auto() {
        let r = row(
            forced(Base100TxFull),
            auto(),
            Some(Base100TxFull),
            Some(Base100TxHalf),
        );
        assert_eq!(
            r.outcome,
            Outcome::DuplexMismatch {
                half_duplex_end: End::B
            }
        );
        assert_eq!(r.b.how, HowResolved::ParallelDetection);
    }

    #[test]
    fn seed_003_appendix_a_row3_auto_against_forced_full() {
        let r = row(
            auto(),
            forced(Base100TxFull),
            Some(Base100TxHalf),
            Some(Base100TxFull),
        );
        assert_eq!(
            r.outcome,
            Outcome::DuplexMismatch {
                half_duplex_end: End::A
            }
        );
    }

    #[test]
    fn seed_003_appendix_a_row4_both_forced_full() {
        let r = row(
            forced(Base100TxFull),
            forced(Base100TxFull),
            Some(Base100TxFull),
            Some(Base100TxFull),
        );
        assert_eq!(r.outcome, Outcome::Ok);
        assert_eq!(r.a.how, HowResolved::Forced);
    }

    #[test]
    fn seed_003_appendix_a_row5_forced_half_against_auto() {
        let r = row(
            forced(Base100TxHalf),
            auto(),
            Some(Base100TxHalf),
            Some(Base100TxHalf),
        );
        assert_eq!(r.outcome, Outcome::Ok, "no mismatch, as the table says");
        // With the table's assumption that both could do 100 full, the link is slower than it
        // could be.
        let nic = forced(Base100TxHalf).capable_of(Abilities::fast_ethernet());
        let r = resolve(nic, auto());
        assert_eq!(
            r.outcome,
            Outcome::SlowerThanPossible {
                running: Base100TxHalf,
                possible: Base100TxFull
            }
        );
    }

    #[test]
    fn seed_003_appendix_a_row6_forced_10_half_against_auto() {
        let r = row(
            forced(Base10THalf),
            auto(),
            Some(Base10THalf),
            Some(Base10THalf),
        );
        assert_eq!(r.outcome, Outcome::Ok);
        assert_eq!(r.b.how, HowResolved::ParallelDetection);
    }

    #[test]
    fn seed_003_appendix_a_row7_speed_mismatch_no_link() {
        let r = row(forced(Base10THalf), forced(Base100TxHalf), None, None);
        assert!(
            matches!(&r.outcome, Outcome::NoLink { reason } if reason.contains("speed mismatch"))
        );
        assert_eq!(r.a.describe(), "no link");
    }

    #[test]
    fn seed_003_appendix_a_row8_auto_against_forced_10_half() {
        let r = row(
            auto(),
            forced(Base10THalf),
            Some(Base10THalf),
            Some(Base10THalf),
        );
        assert_eq!(r.outcome, Outcome::Ok);
    }

    #[test]
    fn seed_003_table9_auto_nic_on_a_10_half_hub_is_no_mismatch() {
        // Table 9 test 1: hub (no auto-negotiation, 10 half) and an auto NIC: "Expected
        // Mismatch: No". Test 2: the NIC forced to 10-full: "Yes".
        let hub = forced(Base10THalf);
        assert_eq!(resolve(auto(), hub).outcome, Outcome::Ok);
        assert_eq!(
            resolve(forced(Base10TFull), hub).outcome,
            Outcome::DuplexMismatch {
                half_duplex_end: End::B
            }
        );
    }

    #[test]
    fn gigabit_ports_negotiate_gigabit_and_detect_fast_ethernet() {
        let g = Partner::auto(Abilities::gigabit());
        assert_eq!(resolve(g, g).a.technology, Some(Base1000TFull));
        assert_eq!(resolve(g, auto()).a.technology, Some(Base100TxFull));
        let r = resolve(g, forced(Base100TxFull));
        assert_eq!(r.a.technology, Some(Base100TxHalf));
        assert_eq!(
            r.outcome,
            Outcome::DuplexMismatch {
                half_duplex_end: End::A
            }
        );
    }

    #[test]
    fn forced_gigabit_negotiates_alone() {
        let r = resolve(forced(Base1000TFull), Partner::auto(Abilities::gigabit()));
        assert_eq!(r.a.technology, Some(Base1000TFull));
        assert_eq!(r.outcome, Outcome::Ok);
        assert!(r.notes[0].contains("40.5.1"));
        let r = resolve(forced(Base1000TFull), auto());
        assert!(matches!(r.outcome, Outcome::NoLink { .. }), "{r:?}");
    }

    #[test]
    fn partners_parse() {
        assert_eq!("auto".parse::<Partner>(), Ok(auto()));
        assert_eq!("AUTO:10/100".parse::<Partner>(), Ok(auto()));
        assert_eq!("auto:0x01E1".parse::<Partner>(), Ok(auto()));
        assert_eq!("100-full".parse::<Partner>(), Ok(forced(Base100TxFull)));
        assert_eq!(
            "auto:10-half,100-full".parse::<Partner>(),
            Ok(Partner::auto("100-full,10-half".parse().unwrap()))
        );
        assert!(matches!(
            "auto:0x0002".parse::<Partner>(),
            Err(PartnerError::NoTechnology { .. })
        ));
        assert!(matches!(
            "fast".parse::<Partner>(),
            Err(PartnerError::Unknown { .. })
        ));
        assert!(matches!(
            "auto:fast".parse::<Partner>(),
            Err(PartnerError::Unknown { .. })
        ));
    }

    #[test]
    fn nothing_in_common_is_no_link() {
        let tens = Partner::auto("10-half,10-full".parse().unwrap());
        let hundreds = Partner::auto("100-full".parse().unwrap());
        assert!(matches!(
            resolve(tens, hundreds).outcome,
            Outcome::NoLink { .. }
        ));
        // A negotiating end that advertises no 100 Mbit/s mode cannot detect a forced one.
        assert!(matches!(
            resolve(tens, forced(Base100TxHalf)).outcome,
            Outcome::NoLink { .. }
        ));
        // Same speed, different signalling.
        let r = resolve(forced(Base100T4), forced(Base100TxHalf));
        assert!(matches!(&r.outcome, Outcome::NoLink { reason } if reason.contains("signalling")));
    }

    #[test]
    fn a_restricted_advertisement_is_slower_than_possible() {
        let limited = Partner::auto("10-full,10-half".parse().unwrap())
            .capable_of(Abilities::fast_ethernet());
        let r = resolve(limited, auto());
        assert_eq!(
            r.outcome,
            Outcome::SlowerThanPossible {
                running: Base10TFull,
                possible: Base100TxFull
            }
        );
    }

    use proptest::prelude::*;

    fn any_partner() -> impl Strategy<Value = Partner> {
        prop_oneof![
            (1u16..512).prop_map(|m| Partner::auto(
                Technology::BY_PRIORITY
                    .into_iter()
                    .filter(|t| m & (1 << (*t as u16)) != 0)
                    .collect()
            )),
            proptest::sample::select(Technology::BY_PRIORITY.to_vec()).prop_map(Partner::forced),
        ]
    }

    proptest! {
        #[test]
        fn links_are_symmetric_and_never_mix_speeds(a in any_partner(), b in any_partner()) {
            let ab = resolve(a, b);
            let ba = resolve(b, a);
            prop_assert_eq!(ab.a, ba.b);
            prop_assert_eq!(ab.b, ba.a);
            prop_assert_eq!(ab.a.speed_mbps, ab.b.speed_mbps, "a link never runs two speeds");
            prop_assert_eq!(ab.a.technology.is_some(), ab.b.technology.is_some());
            if let (Some(ta), Some(tb), Some(best)) = (ab.a.technology, ab.b.technology, ab.best_possible)
                && ta == tb
            {
                // Nobody runs better than both can do.
                prop_assert!(best.priority() <= ta.priority());
            }
            if let (Config::Auto { .. }, Config::Auto { .. }) = (a.effective(), b.effective()) {
                prop_assert!(!matches!(ab.outcome, Outcome::DuplexMismatch { .. }),
                    "two negotiating ends never mismatch");
            }
        }
    }
}
