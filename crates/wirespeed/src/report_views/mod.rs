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
pub(crate) struct CommandViews;

/// A document's `result`, decoded into `T`.
fn result_of<T: DeserializeOwned>(doc: &Value) -> Result<T, String> {
    #[derive(Deserialize)]
    struct Of<T> {
        result: T,
    }
    wirespeed_report::decode::from_value::<Of<T>>(doc.clone())
        .map(|of| of.result)
        .map_err(|e| e.to_string())
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
                    markup: crate::throughput_html::intervals_plot(&r.intervals),
                    headlines: Vec::new(),
                    complete: false,
                })
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests;
