//! The schemas of `lab up --json` (`wirespeed.lab.up.v1`: the lab's record) and `lab status`
//! (`wirespeed.lab.status.v1`: one lab's ports and counters, or the list of labs).

use serde::Serialize;
use wirespeed_lab::PortStatus;
use wirespeed_lab::lifecycle::LabRecord;
use wirespeed_model::RateFormat;

#[derive(Debug, Serialize)]
pub(crate) struct UpParams {
    pub(crate) file: String,
}

#[derive(Debug, Serialize)]
pub struct StatusParams {
    pub name: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum StatusResult {
    One {
        // Boxed: the record (with its measured crossings) would make every list result as big.
        lab: Box<LabRecord>,
        uptime_seconds: f64,
        ports: Vec<PortStatus>,
        #[serde(skip)]
        rate_format: RateFormat,
    },
    List {
        labs: Vec<ListedLab>,
    },
}

/// A recorded lab in `lab status`'s list, marked when its emulator is gone (the lab then
/// holds only what `lab down` removes).
#[derive(Debug, Serialize)]
pub struct ListedLab {
    #[serde(flatten)]
    pub lab: LabRecord,
    pub emulator_running: bool,
}
