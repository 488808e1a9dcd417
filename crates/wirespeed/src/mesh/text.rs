//! What a person reads of a mesh: the fleet's verdicts and warnings from the judged faults,
//! the rate and latency matrices, the CSV, and the text view.

use super::verdicts::{Cleared, MeshVerdict, MeshWarning, RateLook, RoundTripLook, Worded};
use super::*;

impl MeshResult {
    /// The fleet's verdicts from the tests and what is known of each host's port.
    pub(crate) fn judged(
        mut self,
        evidence: Vec<HostEvidence>,
        source: Option<String>,
    ) -> MeshResult {
        let n = self.agents.len();
        let measures = measures_of(&self.tests, &self.rechecks, n);
        let j = model::faults::judge(n, &measures, &evidence, &Thresholds::default());
        self.faults = j.faults;
        self.reach_bits_per_second = j
            .reach_bits_per_second
            .iter()
            .map(|r| r.is_finite().then_some(*r))
            .collect();
        self.yardstick_bits_per_second = j
            .yardstick_bits_per_second
            .is_finite()
            .then_some(j.yardstick_bits_per_second);
        self.analysis = j.analysis;
        self.host_evidence_source = evidence
            .iter()
            .any(|e| *e != HostEvidence::default())
            .then_some(source)
            .flatten();
        self.host_evidence = evidence;
        self
    }

    pub(super) fn name(&self, i: usize) -> &str {
        self.agents.get(i).map_or("?", |a| a.name.as_str())
    }

    pub(super) fn rate(&self, bps: f64) -> String {
        self.rate_format.format(bps)
    }

    /// The named hosts of one of the judge's faults, with its evidence and the counters its
    /// port read.
    pub(crate) fn fault_verdict(&self, f: &Fault) -> MeshVerdict {
        let name = |i: usize| self.name(i).to_string();
        let rechecked_rate = |s: usize, d: usize| {
            self.rechecks
                .iter()
                .any(|c| c.rate && (c.source, c.destination) == (s, d))
        };
        match *f {
            Fault::SlowHost {
                host,
                reach_bits_per_second,
                yardstick_bits_per_second,
                slow_link_bits_per_second,
                tests,
                steady,
            } => {
                let e = self.host_evidence.get(host);
                MeshVerdict::SlowHost {
                    host: name(host),
                    reach_bits_per_second,
                    yardstick_bits_per_second,
                    slow_link_bits_per_second,
                    tests,
                    steady,
                    collisions: e.and_then(|e| e.collisions),
                    late_collisions: e.and_then(|e| e.late_collisions),
                    crc_errors: e.and_then(|e| e.crc_errors),
                }
            }
            Fault::DuplexMismatch {
                host,
                slow,
                median_ratio,
                pairs_showing,
                pairs,
                collisions,
                late_collisions,
                crc_errors,
            } => MeshVerdict::DuplexMismatch {
                host: name(host),
                slow,
                median_ratio,
                pairs_showing,
                pairs,
                collisions,
                late_collisions,
                crc_errors,
            },
            Fault::AsymmetricHost {
                host,
                slow,
                median_ratio,
                pairs_showing,
                pairs,
            } => MeshVerdict::AsymmetricHost {
                host: name(host),
                slow,
                median_ratio,
                pairs_showing,
                pairs,
            },
            Fault::LossyHost {
                host,
                cleanest_retransmit_share,
                median_retransmit_share,
                tests,
                crc_errors,
            } => MeshVerdict::LossyHost {
                host: name(host),
                cleanest_retransmit_share,
                median_retransmit_share,
                tests,
                crc_errors,
            },
            Fault::BadPair {
                source,
                destination,
                rate_bits_per_second,
                expected_bits_per_second,
            } => MeshVerdict::BadPair {
                source: name(source),
                destination: name(destination),
                rate_bits_per_second,
                expected_bits_per_second,
                rechecked: rechecked_rate(source, destination),
            },
            Fault::AsymmetricPair {
                fast_source,
                fast_destination,
                fast_bits_per_second,
                slow_bits_per_second,
            } => MeshVerdict::AsymmetricPair {
                fast_source: name(fast_source),
                fast_destination: name(fast_destination),
                fast_bits_per_second,
                slow_bits_per_second,
            },
            Fault::Latency { ref finding } => self.finding_verdict(finding),
        }
    }

    /// The named hosts of an [`analyse`](model::analyse) finding (the latency ones reach the
    /// verdicts through the judge).
    fn finding_verdict(&self, f: &Finding) -> MeshVerdict {
        let name = |i: usize| self.name(i).to_string();
        match *f {
            Finding::SlowHost {
                host,
                median_bits_per_second,
                fleet_bits_per_second,
                robust_z,
                tests,
            } => MeshVerdict::SlowHostByMedian {
                host: name(host),
                median_bits_per_second,
                fleet_bits_per_second,
                robust_z,
                tests,
            },
            Finding::BadPair {
                source,
                destination,
                rate_bits_per_second,
                expected_bits_per_second,
                robust_z,
            } => MeshVerdict::BadPairByMedian {
                source: name(source),
                destination: name(destination),
                rate_bits_per_second,
                expected_bits_per_second,
                robust_z,
                rechecked: self
                    .rechecks
                    .iter()
                    .any(|c| c.rate && (c.source, c.destination) == (source, destination)),
            },
            Finding::AsymmetricPair {
                fast_source,
                fast_destination,
                fast_bits_per_second,
                slow_bits_per_second,
            } => MeshVerdict::AsymmetricPair {
                fast_source: name(fast_source),
                fast_destination: name(fast_destination),
                fast_bits_per_second,
                slow_bits_per_second,
            },
            Finding::SlowLatencyHost {
                host,
                median_rtt_seconds,
                fleet_rtt_seconds,
            } => MeshVerdict::SlowLatencyHost {
                host: name(host),
                median_rtt_seconds,
                fleet_rtt_seconds,
            },
            Finding::HighLatencyPair {
                source,
                destination,
                rtt_seconds,
                expected_rtt_seconds,
            } => MeshVerdict::HighLatencyPair {
                source: name(source),
                destination: name(destination),
                rtt_seconds,
                expected_rtt_seconds,
                rechecked: self
                    .rechecks
                    .iter()
                    .any(|c| !c.rate && c.is_of(source, destination)),
            },
        }
    }

    /// The sentence of one of the judge's faults, in the rate unit `-f` chose.
    pub(super) fn fault_text(&self, f: &Fault) -> String {
        self.worded(self.fault_verdict(f)).to_string()
    }

    /// A finding with the rate unit of this mesh's `-f`.
    pub(crate) fn worded<T>(&self, judged: T) -> Worded<T> {
        Worded {
            judged,
            rate_format: self.rate_format,
        }
    }

    /// One verdict per fault, with its evidence; one saying so when there is none.
    pub(crate) fn verdicts(&self) -> Vec<MeshVerdict> {
        let mut out: Vec<MeshVerdict> = self.faults.iter().map(|f| self.fault_verdict(f)).collect();
        let finished: Vec<f64> = self.tests.iter().filter_map(PairRecord::rate).collect();
        if out.is_empty() && finished.len() >= 2 {
            out.push(MeshVerdict::NoOutlier {
                hosts: self.agents.len(),
                tests: finished.len(),
                lowest_bits_per_second: finished.iter().copied().fold(f64::INFINITY, f64::min),
                highest_bits_per_second: finished.iter().copied().fold(0.0, f64::max),
            });
        }
        out
    }

    /// Failed tests, agents that share one host, and a schedule that overran its prediction.
    pub(crate) fn warnings(&self) -> Vec<MeshWarning> {
        let mut out = Vec::new();
        if self.agents.len() >= 2 && self.agents.iter().all(|a| a.address.ip().is_loopback()) {
            out.push(MeshWarning::AgentsOnLoopback {
                agents: self.agents.len(),
            });
        }
        if self.slots > 0
            && self.predicted_seconds > 0.0
            && self.elapsed_seconds > 1.1 * self.predicted_seconds
        {
            out.push(MeshWarning::ScheduleOverran {
                elapsed_seconds: self.elapsed_seconds,
                predicted_seconds: self.predicted_seconds,
            });
        }
        // Second looks that cleared what the tests alone would have flagged.
        let stands = |c: &Recheck| {
            self.analysis.findings.iter().any(|f| {
                let h = f.hosts();
                f.is_pair()
                    && c.is_of(h[0], h[1])
                    && matches!(f, Finding::HighLatencyPair { .. }) != c.rate
            })
        };
        let cleared = |rate: bool| {
            self.rechecks
                .iter()
                .filter(move |c| c.rate == rate && c.error.is_none() && !stands(c))
        };
        let named = |c: &Recheck| -> (String, String) {
            (self.name(c.source).into(), self.name(c.destination).into())
        };
        let rates: Vec<Cleared<RateLook>> = cleared(true)
            .map(|c| {
                let (source, destination) = named(c);
                Cleared {
                    source,
                    destination,
                    figure: RateLook {
                        rate_bits_per_second: c.rate_bits_per_second,
                    },
                }
            })
            .collect();
        if !rates.is_empty() {
            out.push(MeshWarning::LowRatesCleared { cleared: rates });
        }
        let round_trips: Vec<Cleared<RoundTripLook>> = cleared(false)
            .map(|c| {
                let (source, destination) = named(c);
                Cleared {
                    source,
                    destination,
                    figure: RoundTripLook {
                        rtt_seconds: c.best(),
                    },
                }
            })
            .collect();
        if !round_trips.is_empty() {
            out.push(MeshWarning::HighRoundTripsCleared {
                cleared: round_trips,
            });
        }
        for c in &self.rechecks {
            if let Some(e) = &c.error {
                let (source, destination) = named(c);
                out.push(MeshWarning::SecondLookFailed {
                    source,
                    destination,
                    error: e.clone(),
                });
            }
        }
        if self.rtt_not_judged > 0 {
            out.push(MeshWarning::RoundTripsNotJudged {
                tests: self.rtt_not_judged,
                cap_seconds: wirespeed_net::spec::NO_DRAIN_CAP.as_secs_f64(),
            });
        }
        for r in &self.tests {
            for p in r.problems() {
                out.push(MeshWarning::TestFailed {
                    source: self.name(r.source).into(),
                    destination: self.name(r.destination).into(),
                    error: p,
                });
            }
        }
        out.truncate(64);
        out
    }

    pub(super) fn matrix_table(
        &self,
        cell: impl Fn(usize, usize) -> String,
    ) -> wirespeed_report::Table {
        let n = self.agents.len();
        let mut t = wirespeed_report::Table::new(
            std::iter::once("from \\ to".to_string()).chain((1..=n).map(|i| i.to_string())),
        );
        for s in 0..n {
            t.row(
                std::iter::once(format!("{} {}", s + 1, self.name(s)))
                    .chain((0..n).map(|d| if s == d { "-".to_string() } else { cell(s, d) })),
            );
        }
        t
    }

    pub(super) fn csv(&self) -> wirespeed_report::Csv {
        let mut c = wirespeed_report::Csv::new([
            "source",
            "destination",
            "source_address",
            "destination_address",
            "slot",
            "planned_start_s",
            "planned_end_s",
            "start_s",
            "end_s",
            "tcp_bits_per_second",
            "retransmits",
            "rtt_median_s",
            "rtt_min_s",
            "probes_sent",
            "probes_answered",
            "error",
        ]);
        let f = |v: Option<f64>| v.map(|v| format!("{v:.9}")).unwrap_or_default();
        let bps = |v: Option<f64>| v.map(|v| format!("{v:.0}")).unwrap_or_default();
        for r in &self.tests {
            let res = r.result.as_ref();
            let lat = res.and_then(|r| r.latency.as_ref());
            c.row([
                self.name(r.source).to_string(),
                self.name(r.destination).to_string(),
                self.agents[r.source].address.to_string(),
                self.agents[r.destination].address.to_string(),
                r.slot.to_string(),
                format!("{:.6}", r.planned_start_seconds),
                format!("{:.6}", r.planned_end_seconds),
                format!("{:.6}", r.start_seconds),
                format!("{:.6}", r.end_seconds),
                bps(r.rate()),
                res.and_then(|r| r.retransmits)
                    .map(|v| v.to_string())
                    .unwrap_or_default(),
                f(lat.and_then(|l| l.median_seconds)),
                f(lat.and_then(|l| l.min_seconds)),
                lat.map(|l| l.sent.to_string()).unwrap_or_default(),
                lat.map(|l| l.answered.to_string()).unwrap_or_default(),
                r.problems().join("; "),
            ]);
        }
        c
    }
}

impl wirespeed_report::Render for MeshResult {
    fn render(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        if self.csv {
            return write!(out, "{}", self.csv());
        }
        writeln!(
            out,
            "wirespeed mesh: {} agents, {} of {} tests in {} slots; planned {}, predicted {} with the tests' tails, took {}",
            self.agents.len(),
            self.tests.len(),
            self.tests_planned,
            self.slots,
            format_seconds(self.planned_seconds),
            format_seconds(self.predicted_seconds),
            format_seconds(self.elapsed_seconds)
        )?;
        if let Some(line) = &self.sample_line {
            writeln!(out, "{line}")?;
        }
        for (i, a) in self.agents.iter().enumerate() {
            writeln!(out, "  {} {} = {}", i + 1, a.name, a.address)?;
        }
        writeln!(out)?;
        writeln!(out, "TCP rate (row: source, column: destination)")?;
        let rates = &self.rate_matrix_bits_per_second;
        let failed = |s: usize, d: usize| {
            self.tests
                .iter()
                .any(|r| r.source == s && r.destination == d && r.rate().is_none())
        };
        write!(
            out,
            "{}",
            self.matrix_table(|s, d| match rates[s][d] {
                Some(v) => self.rate(v),
                None if failed(s, d) => "failed".into(),
                None => "".into(),
            })
        )?;
        writeln!(out)?;
        writeln!(out, "Round trip (best of the UDP echo probes)")?;
        let rtts = &self.rtt_matrix_seconds;
        write!(
            out,
            "{}",
            self.matrix_table(|s, d| rtts[s][d].map(format_seconds).unwrap_or_default())
        )?;
        writeln!(out)?;
        let mut t = wirespeed_report::Table::new(["pair", "a -> b", "b -> a", "asymmetry"]);
        for p in &self.pairs {
            let r = |v: Option<f64>| v.map(|v| self.rate(v)).unwrap_or_default();
            t.row([
                format!("{} <-> {}", self.name(p.a), self.name(p.b)),
                r(p.a_to_b_bits_per_second),
                r(p.b_to_a_bits_per_second),
                p.asymmetry
                    .map(|a| format!("{:.0}%", 100.0 * a))
                    .unwrap_or_default(),
            ]);
        }
        write!(out, "{t}")?;
        if let Some(f) = &self.results_file {
            writeln!(out, "results file: {f}")?;
        }
        Ok(())
    }
}
