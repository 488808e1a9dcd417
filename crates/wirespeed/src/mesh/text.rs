//! What a person reads of a mesh: the fleet's verdicts and warnings from the judged faults,
//! the rate and latency matrices, the CSV, and the text view.

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

    /// The words of an [`analyse`](model::analyse) finding (the latency ones reach the verdicts
    /// through the judge).
    pub(super) fn finding_text(&self, f: &Finding) -> String {
        match *f {
            Finding::SlowHost {
                host,
                median_bits_per_second,
                fleet_bits_per_second,
                robust_z,
                tests,
            } => format!(
                "host {} is slow in every pair: median {} over its {tests} tests against {} for the fleet ({:.1} robust SD below): a host problem (CPU, NIC settings, its own port); run `wirespeed diagnose` on it",
                self.name(host),
                self.rate(median_bits_per_second),
                self.rate(fleet_bits_per_second),
                -robust_z
            ),
            Finding::BadPair {
                source,
                destination,
                rate_bits_per_second,
                expected_bits_per_second,
                robust_z,
            } => format!(
                "pair {} -> {} is far below the other tests of its hosts: {} against {} ({:.1} robust SD below{}): a bad link or port between them",
                self.name(source),
                self.name(destination),
                self.rate(rate_bits_per_second),
                self.rate(expected_bits_per_second),
                -robust_z,
                if self
                    .rechecks
                    .iter()
                    .any(|c| { c.rate && (c.source, c.destination) == (source, destination) })
                {
                    "; the better of its test and a second look when no other test ran"
                } else {
                    ""
                }
            ),
            Finding::AsymmetricPair {
                fast_source,
                fast_destination,
                fast_bits_per_second,
                slow_bits_per_second,
            } => format!(
                "pair {} <-> {} is asymmetric: {} from {} to {} but {} back ({:.0}% of it): the signature of a duplex mismatch (seed 003); check both ends with `wirespeed diagnose`",
                self.name(fast_source),
                self.name(fast_destination),
                self.rate(fast_bits_per_second),
                self.name(fast_source),
                self.name(fast_destination),
                self.rate(slow_bits_per_second),
                100.0 * slow_bits_per_second / fast_bits_per_second
            ),
            Finding::SlowLatencyHost {
                host,
                median_rtt_seconds,
                fleet_rtt_seconds,
            } => format!(
                "host {} answers slowly in every pair: median best round trip {} against {} for the fleet",
                self.name(host),
                format_seconds(median_rtt_seconds),
                format_seconds(fleet_rtt_seconds)
            ),
            Finding::HighLatencyPair {
                source,
                destination,
                rtt_seconds,
                expected_rtt_seconds,
            } => format!(
                "pair {} <-> {} has a high round trip: {} against {} for the other tests of its hosts (the best probe of both directions' tests{})",
                self.name(source),
                self.name(destination),
                format_seconds(rtt_seconds),
                format_seconds(expected_rtt_seconds),
                if self
                    .rechecks
                    .iter()
                    .any(|c| !c.rate && c.is_of(source, destination))
                {
                    ", and again of a second look when no other test ran"
                } else {
                    ""
                }
            ),
        }
    }

    /// The words of a counter the agent's port read, if it read it.
    pub(super) fn counted(e: Option<&HostEvidence>) -> String {
        let Some(e) = e else {
            return String::new();
        };
        let parts: Vec<String> = [
            (e.late_collisions, "late collision(s)"),
            (e.collisions, "collision(s) in all"),
            (e.crc_errors, "CRC error(s) received"),
        ]
        .iter()
        .filter_map(|(c, what)| c.map(|c| format!("{c} {what}")))
        .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!("; its port counted {} over the mesh", parts.join(", "))
        }
    }

    /// The words of one of the judge's faults, with its evidence.
    pub(super) fn fault_text(&self, f: &Fault) -> String {
        match f {
            Fault::SlowHost {
                host,
                reach_bits_per_second,
                yardstick_bits_per_second,
                slow_link_bits_per_second,
                tests,
                steady,
            } => {
                let cause = match (slow_link_bits_per_second, steady) {
                    (Some(link), _) => format!(
                        ": its own link carries at most {} of TCP against the fleet's typical {} (the link is the cause: a port that negotiated down or a slow line)",
                        self.rate(*link),
                        self.rate(*yardstick_bits_per_second)
                    ),
                    (None, true) => ": its tests hold steady near that rate, a port, link or CPU at a lower rate; run `wirespeed diagnose` on it".into(),
                    (None, false) => ": its tests are erratic below that best, a port that loses frames (a duplex mismatch or a bad cable: its collision and CRC counters tell them apart); run `wirespeed diagnose` on it".into(),
                };
                format!(
                    "host {} is slow in every pair: its best test of {tests} reached {} against {} for the fleet's best-connected quarter{cause}{}",
                    self.name(*host),
                    self.rate(*reach_bits_per_second),
                    self.rate(*yardstick_bits_per_second),
                    Self::counted(self.host_evidence.get(*host))
                )
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
            } => {
                let rates = if *pairs_showing > 0 {
                    format!(
                        "what it {} runs at {:.0}% of the other way with {pairs_showing} of its {pairs} partners",
                        match slow {
                            SlowDirection::Sending => "sends",
                            SlowDirection::Receiving => "receives",
                        },
                        median_ratio * 100.0
                    )
                } else {
                    format!("it is slow with all {pairs} of its tests")
                };
                format!(
                    "host {} has a duplex mismatch on its link: {rates}{} (seed 003: late collisions at the half-duplex end, CRC errors at the full one); configure both ends the same way, preferably both auto",
                    self.name(*host),
                    Self::counted(Some(&HostEvidence {
                        link_ceiling_bits_per_second: None,
                        collisions: *collisions,
                        late_collisions: *late_collisions,
                        crc_errors: *crc_errors,
                    }))
                )
            }
            Fault::LossyHost {
                host,
                cleanest_retransmit_share,
                median_retransmit_share,
                tests,
                crc_errors,
            } => format!(
                "host {} loses frames at its own port: every one of its {tests} tests retransmitted, at least {:.1}% of its segments (median {:.1}%), while its partners' other tests did not{}: a bad cable, port or link; run `wirespeed diagnose` on it",
                self.name(*host),
                cleanest_retransmit_share * 100.0,
                median_retransmit_share * 100.0,
                crc_errors.map_or(String::new(), |c| format!(
                    "; its port received {c} frame(s) with a bad CRC over the mesh"
                ))
            ),
            Fault::BadPair {
                source,
                destination,
                rate_bits_per_second,
                expected_bits_per_second,
            } => format!(
                "pair {} -> {} is far below what both its hosts reach with the others: {} against {}{}: a bad link or port between them",
                self.name(*source),
                self.name(*destination),
                self.rate(*rate_bits_per_second),
                self.rate(*expected_bits_per_second),
                if self
                    .rechecks
                    .iter()
                    .any(|c| { c.rate && (c.source, c.destination) == (*source, *destination) })
                {
                    " (the better of its test and a second look when no other test ran)"
                } else {
                    ""
                }
            ),
            Fault::AsymmetricPair {
                fast_source,
                fast_destination,
                fast_bits_per_second,
                slow_bits_per_second,
            } => self.finding_text(&Finding::AsymmetricPair {
                fast_source: *fast_source,
                fast_destination: *fast_destination,
                fast_bits_per_second: *fast_bits_per_second,
                slow_bits_per_second: *slow_bits_per_second,
            }),
            Fault::Latency { finding } => self.finding_text(finding),
        }
    }

    /// One sentence per fault, with its evidence; one saying so when there is none.
    pub(crate) fn verdicts(&self) -> Vec<String> {
        let mut out: Vec<String> = self.faults.iter().map(|f| self.fault_text(f)).collect();
        let finished: Vec<f64> = self.tests.iter().filter_map(PairRecord::rate).collect();
        if out.is_empty() && finished.len() >= 2 {
            let lo = finished.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = finished.iter().copied().fold(0.0, f64::max);
            out.push(format!(
                "no outlier among {} hosts and {} tests (rates {} to {})",
                self.agents.len(),
                finished.len(),
                self.rate(lo),
                self.rate(hi)
            ));
        }
        out
    }

    /// Failed tests, agents that share one host, and a schedule that overran its prediction.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.agents.len() >= 2 && self.agents.iter().all(|a| a.address.ip().is_loopback()) {
            out.push(
                "every agent is on this host's loopback: the tests share its CPUs, not links, so rates and outliers here measure the host's scheduling".into(),
            );
        }
        if self.slots > 0
            && self.predicted_seconds > 0.0
            && self.elapsed_seconds > 1.1 * self.predicted_seconds
        {
            out.push(format!(
                "the mesh took {}, {:.0}% over the schedule's {} (its plan and each test's tail as measured): a busy host was slow to set tests up and answer",
                format_seconds(self.elapsed_seconds),
                100.0 * (self.elapsed_seconds / self.predicted_seconds - 1.0),
                format_seconds(self.predicted_seconds)
            ));
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
        for rate in [true, false] {
            let cleared: Vec<String> = self
                .rechecks
                .iter()
                .filter(|c| c.rate == rate && c.error.is_none() && !stands(c))
                .map(|c| {
                    format!(
                        "{} -> {} {}",
                        self.name(c.source),
                        self.name(c.destination),
                        if rate {
                            c.rate_bits_per_second
                                .map_or("(no figure)".into(), |v| self.rate(v))
                        } else {
                            c.best().map_or("(no answer)".into(), format_seconds)
                        }
                    )
                })
                .collect();
            if cleared.is_empty() {
                continue;
            }
            out.push(if rate {
                format!(
                    "{} test(s) with a low rate were run again when no other test ran and were as their hosts' others (not flagged; a busy host or another test's traffic, not the link): {}",
                    cleared.len(),
                    cleared.join(", ")
                )
            } else {
                format!(
                    "{} pair(s) whose tests' probes all came back late were probed again when no other test ran, and their round trip was as their hosts' others (not flagged): {}",
                    cleared.len(),
                    cleared.join(", ")
                )
            });
        }
        for c in &self.rechecks {
            if let Some(e) = &c.error {
                out.push(format!(
                    "second look at {} <-> {}: {e}",
                    self.name(c.source),
                    self.name(c.destination)
                ));
            }
        }
        if self.rtt_not_judged > 0 {
            out.push(format!(
                "{} test(s) have round trips that were not judged: their probes started right after a test of one of their agents whose data was still arriving when its tail reached the {} s cap (a queue longer than that), so they may have waited behind it",
                self.rtt_not_judged,
                wirespeed_net::spec::NO_DRAIN_CAP.as_secs_f64()
            ));
        }
        for r in &self.tests {
            for p in r.problems() {
                out.push(format!(
                    "test {} -> {}: {p}",
                    self.name(r.source),
                    self.name(r.destination)
                ));
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
