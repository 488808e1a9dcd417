//! `mesh --pairs N [--seed S]`: a seeded random sample of the fleet's ordered pairs instead of
//! all of them, so that a fleet too large for a full mesh (a thousand agents: a million tests,
//! three hours at `-t 5s`) is measured in the time the model predicts for the sample. The
//! choice of pairs is pure and lives in `wirespeed_model::mesh::sample`; here are the flags, the
//! seed's draw and the plan's view of the sample.

use std::collections::HashSet;

use anyhow::bail;
use clap::Args;
use wirespeed_model::mesh::{self as model, Pair};

use super::result::MeshPlan;
pub(crate) use super::result::Sample;

#[derive(Debug, Args)]
pub(crate) struct SampleArgs {
    /// Measure a seeded random sample of N ordered pairs instead of all N(N-1): drawn as whole
    /// rounds of the mesh's schedule, so no agent is in two tests at once and the sample takes
    /// N / (agents/2) slots; every agent sends and receives once N reaches the agents' count
    /// (twice it, less 2, for an odd fleet).
    #[arg(long, value_name = "N")]
    pub(crate) pairs: Option<usize>,

    /// The sample's seed (default: drawn at random; printed, and in the JSON's parameters): the
    /// same seed and agents give the same pairs.
    #[arg(long, value_name = "SEED", requires = "pairs")]
    pub(crate) seed: Option<u64>,
}

impl SampleArgs {
    /// The flags beside the others: a resumed mesh runs the sample its file holds, and the
    /// meshes of a schedule (`--every`, or its file resumed), which builds its plan from the
    /// flags, must all measure the same one.
    pub(crate) fn check(&self, resumed_mesh: bool, schedule: bool) -> anyhow::Result<()> {
        if resumed_mesh && self.pairs.is_some() {
            bail!("--resume: the results file holds the mesh's sample; drop --pairs and --seed");
        }
        if schedule && self.pairs.is_some() && self.seed.is_none() {
            bail!(
                "a schedule (--every) with --pairs needs --seed S, so that every mesh of the schedule, resumed or not, measures the same pairs"
            );
        }
        Ok(())
    }

    /// The sample asked for, its seed drawn when not given.
    pub(crate) fn sample(&self) -> Option<Sample> {
        self.pairs.map(|pairs| Sample {
            pairs,
            seed: self.seed.unwrap_or_else(random_seed),
        })
    }
}

/// A seed from the system's random source; should it fail, from the clock and the process
/// (a seed only has to differ between runs: it is printed, and given again it repeats the run).
fn random_seed() -> u64 {
    let mut b = [0u8; 8];
    if wirespeed_net::auth::random_bytes(&mut b).is_ok() {
        return u64::from_le_bytes(b);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32)
}

impl MeshPlan {
    /// The plan's rounds before `--concurrency` merges them: the sample's, or the full
    /// tournament's.
    pub(crate) fn rounds(&self) -> Vec<Vec<Pair>> {
        let n = self.agents.len();
        match self.sample {
            Some(s) => model::sampled_rounds(n, s.pairs, s.seed),
            None => model::tournament(n),
        }
    }

    /// The tests the plan has: the sample's size or N(N-1).
    pub(crate) fn tests_planned(&self) -> usize {
        let n = self.agents.len();
        let all = n * n.saturating_sub(1);
        self.sample.map_or(all, |s| s.pairs.min(all))
    }

    /// The sample's pairs (None: every pair is in the plan), to leave the pairs no test was
    /// planned for out of the document.
    pub(crate) fn sampled_pairs(&self) -> Option<HashSet<Pair>> {
        self.sample
            .is_some()
            .then(|| self.rounds().into_iter().flatten().collect())
    }

    /// A sample larger than the mesh, or empty, is a mistake in the flags.
    pub(crate) fn check_sample(&self) -> anyhow::Result<()> {
        let Some(s) = self.sample else {
            return Ok(());
        };
        let n = self.agents.len();
        let all = n * n.saturating_sub(1);
        if s.pairs == 0 || s.pairs > all {
            bail!(
                "--pairs {} is out of range: {n} agents have 1 to {all} ordered pairs (drop --pairs for all of them)",
                s.pairs
            );
        }
        Ok(())
    }

    /// The text view's line for a sample: its size, seed and what the schedule's model says
    /// it and the full mesh take.
    pub(crate) fn sample_line(&self) -> Option<String> {
        let s = self.sample?;
        let n = self.agents.len();
        let timing = self.timing();
        let sampled = super::predict(
            &model::slots(&self.rounds(), self.concurrency),
            &timing,
            |_| 0.0,
        );
        let full = model::full_mesh_scale(
            n,
            self.concurrency,
            &timing,
            &model::ControllerMemory {
                base_bytes: 0.0,
                per_test_bytes: 0.0,
            },
        );
        let covered = s.pairs >= model::covering_pairs(n);
        Some(format!(
            "sampled: {} of {} ordered pairs, seed {} (--pairs {} --seed {} draws them again); the model plans {} for them against {} for the full mesh; {}",
            self.tests_planned(),
            n * n.saturating_sub(1),
            s.seed,
            s.pairs,
            s.seed,
            wirespeed_model::units::format_seconds(sampled),
            wirespeed_model::units::format_seconds(full.seconds),
            if covered {
                "every agent sends and receives".to_string()
            } else {
                format!(
                    "not every agent sends and receives (that takes --pairs {} or more)",
                    model::covering_pairs(n)
                )
            }
        ))
    }
}
