//! From a mesh's finished tests to its result: the rate and round-trip matrices, each pair's
//! two directions, the tests as the judge weighs them (a second look's figures in, round trips
//! that may have waited behind another test's data marked), and the fleet judge's faults
//! (`wirespeed_model::mesh::faults`). Pure: the tests are measured in `measure.rs`.

use wirespeed_model::RateFormat;
use wirespeed_model::mesh::faults::HostEvidence;
use wirespeed_model::mesh::{self as model, PairMeasure, Thresholds};
use wirespeed_report::Document;

use super::result::{MeshPlan, MeshResult, PairFigures, PairRecord, Recheck};

impl MeshResult {
    /// The document of a finished (or cut) mesh, with its verdicts and warnings.
    #[doc(hidden)]
    pub fn document(self, plan: &MeshPlan) -> Document<MeshPlan, MeshResult> {
        let mut doc = Document::new("mesh", plan.clone(), self);
        for v in doc.result.verdicts() {
            let v = doc.result.worded(v);
            doc.verdict(&v);
        }
        for w in doc.result.warnings() {
            let w = doc.result.worded(w);
            doc.warning(&w);
        }
        doc
    }

    /// The median of the pairs' TCP rates: a scheduled mesh's headline.
    pub(super) fn median_rate(&self) -> Option<f64> {
        let mut rates: Vec<f64> = self
            .tests
            .iter()
            .filter_map(PairRecord::rate)
            .filter(|r| r.is_finite())
            .collect();
        rates.sort_by(f64::total_cmp);
        let n = rates.len();
        (n > 0).then(|| {
            if n % 2 == 1 {
                rates[n / 2]
            } else {
                (rates[n / 2 - 1] + rates[n / 2]) / 2.0
            }
        })
    }
}

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
}

/// For each test of `done`: whether its probes may have waited behind another test's data.
/// The last test before it of its source or its destination (by the controller's clock) was
/// still receiving when its tail reached the cap, or its tail ended on a socket error, so data
/// may still have been on the path when the probes went out. A tail that ended with the
/// sender's reset, its FIN or a quiet gap left the path empty before the test ended, and the
/// agents' next tests started after that.
pub(super) fn behind_queue(done: &[PairRecord], n: usize) -> Vec<bool> {
    use wirespeed_net::report::DrainEnd;
    // Per agent, its tests' (end, index), by end.
    let mut by_agent: Vec<Vec<(f64, usize)>> = vec![Vec::new(); n];
    for (i, r) in done.iter().enumerate() {
        for a in [r.source, r.destination] {
            if a < n {
                by_agent[a].push((r.end_unix_seconds, i));
            }
        }
    }
    for list in &mut by_agent {
        list.sort_by(|x, y| x.0.total_cmp(&y.0));
    }
    let unsound = |i: usize| {
        done[i]
            .tail()
            .is_some_and(|t| matches!(t.ended_by, DrainEnd::Cap | DrainEnd::Error))
    };
    done.iter()
        .enumerate()
        .map(|(i, r)| {
            [r.source, r.destination].into_iter().any(|a| {
                let Some(list) = by_agent.get(a) else {
                    return false;
                };
                let k = list.partition_point(|&(end, _)| end <= r.start_unix_seconds);
                list[..k]
                    .iter()
                    .rev()
                    .find(|&&(_, j)| j != i)
                    .is_some_and(|&(_, j)| unsound(j))
            })
        })
        .collect()
}

/// The tests as the judge weighs them: each pair's rate the better of its test and a second
/// look, its round trip the best of both, and whether its probes waited behind a queue.
pub(super) fn measures_of(done: &[PairRecord], rechecks: &[Recheck], n: usize) -> Vec<PairMeasure> {
    let behind = behind_queue(done, n);
    done.iter()
        .zip(&behind)
        .filter(|(r, _)| r.source < n && r.destination < n)
        .map(|(r, &behind)| PairMeasure {
            source: r.source,
            destination: r.destination,
            // The path's rate: the better of the test and its second look (a busy host or
            // another test's traffic lowers a rate, a slow link lowers both).
            rate_bits_per_second: rechecks
                .iter()
                .filter(|c| c.rate && (c.source, c.destination) == (r.source, r.destination))
                .filter_map(|c| c.rate_bits_per_second)
                .chain(r.rate())
                .reduce(f64::max),
            // The path's best round trip: a second look's probes count as the tests' do.
            rtt_seconds: rechecks
                .iter()
                .filter(|c| !c.rate && c.is_of(r.source, r.destination))
                .filter_map(Recheck::best)
                .chain(r.rtt())
                .reduce(f64::min),
            rtt_behind_queue: behind,
            retransmit_share: r.result.as_ref().and_then(|x| {
                let segments = x.tcp_bytes? as f64 / SEGMENT_BYTES;
                (segments >= 1.0).then(|| x.retransmits.unwrap_or(0) as f64 / segments)
            }),
        })
        .collect()
}

/// The payload of one TCP segment on the paths a mesh judges (MTU 1500, timestamps): the
/// retransmitted share counts segments from the bytes a test carried.
const SEGMENT_BYTES: f64 = 1448.0;

/// The document's result from the plan and the finished tests.
#[allow(clippy::too_many_arguments)]
#[doc(hidden)]
pub fn build_result(
    plan: &MeshPlan,
    done: &[PairRecord],
    slots: usize,
    (planned, predicted): (f64, f64),
    elapsed: f64,
    rechecks: &[Recheck],
    results_file: Option<String>,
    rate_format: RateFormat,
    csv: bool,
) -> MeshResult {
    let n = plan.agents.len();
    let mut rates = vec![vec![None; n]; n];
    let mut rtts = vec![vec![None; n]; n];
    for r in done {
        if r.source < n && r.destination < n {
            rates[r.source][r.destination] = r.rate();
            rtts[r.source][r.destination] = r.rtt();
        }
    }
    let mut pairs = Vec::new();
    let sampled = plan.sampled_pairs();
    for a in 0..n {
        for b in a + 1..n {
            if sampled
                .as_ref()
                .is_some_and(|p| !p.contains(&(a, b)) && !p.contains(&(b, a)))
            {
                continue;
            }
            pairs.push(PairFigures {
                a,
                b,
                a_to_b_bits_per_second: rates[a][b],
                b_to_a_bits_per_second: rates[b][a],
                asymmetry: model::asymmetry(rates[a][b], rates[b][a]),
                a_to_b_rtt_seconds: rtts[a][b],
                b_to_a_rtt_seconds: rtts[b][a],
            });
        }
    }
    let measures = measures_of(done, rechecks, n);
    let rtt_not_judged = measures
        .iter()
        .filter(|m| m.rtt_behind_queue && m.rtt_seconds.is_some())
        .count();
    MeshResult {
        agents: plan.agents.clone(),
        tests_planned: plan.tests_planned(),
        tests_failed: done.iter().filter(|r| r.rate().is_none()).count(),
        slots,
        predicted_seconds: predicted,
        planned_seconds: planned,
        rtt_not_judged,
        elapsed_seconds: elapsed,
        rate_matrix_bits_per_second: rates,
        rtt_matrix_seconds: rtts,
        pairs,
        analysis: model::analyse(n, &measures, &Thresholds::default()),
        faults: Vec::new(),
        reach_bits_per_second: Vec::new(),
        yardstick_bits_per_second: None,
        host_evidence: Vec::new(),
        host_evidence_source: None,
        tests: done.to_vec(),
        rechecks: rechecks.to_vec(),
        results_file,
        rate_format,
        csv,
        sample_line: plan.sample_line(),
    }
    .judged(Vec::new(), None)
}
