//! `lab status` measured: one running lab's ports as its emulator counts them (with the
//! bottleneck warnings they show), or the labs recorded. Nothing is printed here.

use anyhow::bail;
use wirespeed_lab::lab_bottleneck;
use wirespeed_lab::lifecycle::{self, StatusRecord};
use wirespeed_model::RateFormat;
use wirespeed_report::Document;

use super::result::{ListedLab, StatusParams, StatusResult};

/// The `lab.status` document of the lab `name`, or of every recorded lab without one.
pub(crate) fn status(
    name: Option<&str>,
    rate_format: RateFormat,
) -> anyhow::Result<Document<StatusParams, StatusResult>> {
    let result = match name {
        Some(name) => one(name, rate_format)?,
        None => StatusResult::List { labs: listed() },
    };
    let warnings: Vec<wirespeed_lab::LabBottleneck> = match &result {
        StatusResult::One { ports, .. } => ports.iter().filter_map(lab_bottleneck).collect(),
        StatusResult::List { .. } => Vec::new(),
    };
    let mut doc = Document::new(
        "lab.status",
        StatusParams {
            name: name.map(str::to_string),
        },
        result,
    );
    for w in &warnings {
        doc.warning(w);
    }
    Ok(doc)
}

/// One lab's ports, refused when its emulator is gone (nothing would be counting).
fn one(name: &str, rate_format: RateFormat) -> anyhow::Result<StatusResult> {
    let (
        lab,
        StatusRecord {
            uptime_seconds,
            ports,
            ..
        },
    ) = lifecycle::status(name)?;
    if !lifecycle::emulator_running(name) {
        bail!(
            "the emulator of lab {name} (pid {}) is not running; `wirespeed lab down {name}` removes what it left",
            lab.pid
        );
    }
    Ok(StatusResult::One {
        lab: Box::new(lab),
        uptime_seconds,
        ports,
        rate_format,
    })
}

/// The labs recorded in the state directory, each marked by whether its emulator runs.
fn listed() -> Vec<ListedLab> {
    lifecycle::running()
        .iter()
        .filter_map(|n| {
            lifecycle::record(n).ok().map(|lab| ListedLab {
                lab,
                emulator_running: lifecycle::emulator_running(n),
            })
        })
        .collect()
}
