//! `autoneg --metrics-file`: what each end runs and whether the link is the one it should be;
//! for a decoded or encoded word, the modes it advertises.

use wirespeed_model::autoneg::resolve::{EndState, Outcome};
use wirespeed_model::envelope::Duplex;

use crate::autoneg::AutonegReport;
use crate::common::metrics::{Exposition, Metrics};

fn end(m: &mut Exposition, name: &'static str, state: &EndState) {
    let labels = [("end", name)];
    m.gauge(
        "link_up",
        "1 when the end has a link",
        &labels,
        f64::from(u8::from(state.technology.is_some())),
    );
    m.maybe(
        "speed_bits_per_second",
        "the speed the end runs",
        &labels,
        state.speed_mbps.map(|s| f64::from(s) * 1e6),
    );
    m.maybe(
        "full_duplex",
        "1 when the end runs full duplex, 0 half",
        &labels,
        state
            .technology
            .map(|t| f64::from(u8::from(t.duplex() == Duplex::Full))),
    );
}

impl Metrics for AutonegReport {
    fn metrics(&self, m: &mut Exposition) {
        match self {
            AutonegReport::Resolve(r) => {
                end(m, "a", &r.resolution.a);
                end(m, "b", &r.resolution.b);
                let class = match &r.resolution.outcome {
                    Outcome::Ok => "ok",
                    Outcome::DuplexMismatch { .. } => "duplex_mismatch",
                    Outcome::NoLink { .. } => "no_link",
                    Outcome::SlowerThanPossible { .. } => "slower_than_possible",
                };
                for c in ["ok", "duplex_mismatch", "no_link", "slower_than_possible"] {
                    m.flag(
                        "outcome",
                        "1 for the class of the resolved link, 0 for the others",
                        &[("class", c)],
                        c == class,
                    );
                }
                m.maybe(
                    "best_possible_speed_bits_per_second",
                    "the fastest mode both ends' hardware could run",
                    &[],
                    r.resolution
                        .best_possible
                        .map(|t| f64::from(t.speed_mbps()) * 1e6),
                );
            }
            AutonegReport::Word(w) => {
                m.gauge(
                    "link_code_word",
                    "the base page's 16 bits as a number",
                    &[],
                    f64::from(w.word.bits()),
                );
                if let Some(advertised) = w.advertised {
                    for t in advertised.iter() {
                        m.gauge(
                            "advertised",
                            "1 for each mode the word advertises",
                            &[("mode", &t.to_string())],
                            1.0,
                        );
                    }
                }
            }
        }
    }
}
