//! What `wirespeed report` shows of each command's documents: the document is decoded into the
//! command's own result type (the one that wrote it, `serde(default)` for fields added later)
//! and that type renders its HTML view, which sits beside its text view. No field is read by a
//! string path: a renamed field is a compile error here, not a blank table at run time.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use wirespeed_report::html::{View, Views};

/// The typed views of every command that has one.
#[derive(Debug, Clone, Copy, Default)]
#[doc(hidden)]
pub struct CommandViews;

/// A document's `result`, decoded into `T`.
fn result_of<T: DeserializeOwned>(doc: &Value) -> Result<T, String> {
    #[derive(Deserialize)]
    struct Of<T> {
        result: T,
    }
    wirespeed_report::decode::from_value_ref::<Of<T>>(doc)
        .map(|of| of.result)
        .map_err(|e| e.to_string())
}

/// A whole document (a results file's plan with its runs) decoded into `T`.
fn decode_whole<T: DeserializeOwned>(doc: &Value) -> Result<T, String> {
    wirespeed_report::decode::from_value_ref::<T>(doc).map_err(|e| e.to_string())
}

/// Fields whose presence tells two shapes of one schema apart.
#[derive(Clone, Copy)]
enum Field {
    Points,
    Outcome,
}

/// Whether the document's result has `field` (a typed look, not a path read).
fn has_field(doc: &Value, field: Field) -> bool {
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Shape {
        points: Option<serde::de::IgnoredAny>,
        outcome: Option<serde::de::IgnoredAny>,
    }
    let shape = result_of::<Shape>(doc).unwrap_or_default();
    match field {
        Field::Points => shape.points.is_some(),
        Field::Outcome => shape.outcome.is_some(),
    }
}

impl Views for CommandViews {
    fn view(&self, command: &str, doc: &Value) -> Option<Result<View, String>> {
        Some(match command {
            "tcp" | "udp" => result_of::<crate::throughput::ThroughputResult>(doc).map(|r| View {
                markup: r.html(),
                headlines: r.headlines(),
                complete: true,
            }),
            // A cut-off --json-stream: the intervals that arrived.
            "stream" => {
                #[derive(Deserialize)]
                struct Intervals {
                    intervals: Vec<wirespeed_net::report::Interval>,
                }
                result_of::<Intervals>(doc).map(|r| View {
                    markup: crate::throughput::html::intervals_plot(&r.intervals),
                    headlines: Vec::new(),
                    complete: false,
                })
            }
            "sweep" => result_of::<crate::sweep::SweepReport>(doc).map(|r| View {
                markup: r.html(),
                headlines: r.headlines(),
                complete: true,
            }),
            "sweep-runs" => decode_whole::<crate::sweep::html::SweepRuns>(doc).map(|r| View {
                markup: r.html(),
                headlines: Vec::new(),
                complete: true,
            }),
            "load" => result_of::<crate::load::LoadResult>(doc).map(|r| View {
                markup: r.html(),
                headlines: Vec::new(),
                complete: true,
            }),
            "load-runs" => decode_whole::<crate::load::html::LoadRuns>(doc)
                .and_then(|r| r.html())
                .map(|markup| View {
                    markup,
                    headlines: Vec::new(),
                    complete: true,
                }),
            "mesh" => result_of::<crate::mesh::MeshResult>(doc).map(|r| View {
                markup: r.html(),
                headlines: r.headlines(),
                complete: true,
            }),
            "mesh-runs" => decode_whole::<crate::mesh::html::MeshRuns>(doc).map(|r| View {
                markup: r.html(),
                headlines: Vec::new(),
                complete: true,
            }),
            "probe" => result_of::<crate::probe::ProbeReport>(doc).map(|r| View {
                markup: r.html(),
                headlines: Vec::new(),
                complete: true,
            }),
            // `sim link` has directions and no points: its fields are its content.
            "sim" if !has_field(doc, Field::Points) => return None,
            "sim" => result_of::<crate::sim::SimReport>(doc).map(|r| View {
                markup: r.html(),
                headlines: Vec::new(),
                complete: true,
            }),
            "reproduce" => result_of::<crate::reproduce::Reproduction>(doc).map(|r| View {
                markup: r.html(),
                headlines: r.headlines(),
                complete: true,
            }),
            // A decoded or encoded code word has no partners to resolve.
            "autoneg" if !has_field(doc, Field::Outcome) => return None,
            "autoneg" => result_of::<wirespeed_model::autoneg::Resolution>(doc).map(|r| View {
                markup: crate::autoneg::html::html(&r),
                headlines: Vec::new(),
                complete: true,
            }),
            "envelope" => result_of::<wirespeed_model::Envelope>(doc).map(|e| View {
                markup: crate::envelope::html::html(&e),
                headlines: vec![
                    (
                        "goodput ceiling".into(),
                        "bits_per_second",
                        e.goodput_bits_per_second,
                    ),
                    ("efficiency".into(), "", e.efficiency),
                ],
                // The envelope's every field is its content: shown open.
                complete: false,
            }),
            "latency" => result_of::<crate::latency::LatencyResult>(doc).map(|r| View {
                markup: r.html(),
                headlines: r.headlines(),
                complete: true,
            }),
            "latency-rr" => result_of::<crate::latency::RrResult>(doc).map(|r| View {
                markup: r.html(),
                headlines: r.headlines(),
                complete: true,
            }),
            // What `iperf3 -J` printed: compared with `tcp`/`udp` runs by the same headlines.
            "iperf3" => {
                decode_whole::<crate::throughput::iperf3::html::Iperf3Run>(doc).map(|r| View {
                    markup: r.html(),
                    headlines: r.headlines(),
                    complete: true,
                })
            }
            _ => return None,
        })
    }
}
