//! What a person reads of a mesh: the fleet's verdicts and warnings in the rate unit `-f`
//! chose, the rate and latency matrices, the CSV, and the text view.

use wirespeed_model::mesh::faults::Fault;
use wirespeed_model::units::format_seconds;

use super::result::MeshResult;
use super::verdicts::Worded;

impl MeshResult {
    pub(super) fn name(&self, i: usize) -> &str {
        self.agents.get(i).map_or("?", |a| a.name.as_str())
    }

    pub(super) fn rate(&self, bps: f64) -> String {
        self.rate_format.format(bps)
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

    #[doc(hidden)]
    pub fn csv(&self) -> wirespeed_report::Csv {
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
