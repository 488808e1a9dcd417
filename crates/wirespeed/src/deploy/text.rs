//! The text view of `deploy`: the manifests as YAML documents for `kubectl apply -f -`.

use std::io::Write;

use serde_json::Value;

use super::result::Manifests;

/// A JSON value as YAML block style: maps and lists indented, every string quoted as JSON
/// quotes it (a JSON string is a YAML double-quoted scalar), so no value is ever read as
/// another type.
#[doc(hidden)]
pub fn yaml(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(map) => {
            for (k, val) in map {
                match val {
                    Value::Object(m) if !m.is_empty() => {
                        out.push_str(&format!("{pad}{k}:\n"));
                        yaml(val, indent + 2, out);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        out.push_str(&format!("{pad}{k}:\n"));
                        yaml(val, indent, out);
                    }
                    _ => out.push_str(&format!("{pad}{k}: {}\n", scalar(val))),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        let mut inner = String::new();
                        yaml(item, indent + 2, &mut inner);
                        // The first key goes on the dash's line.
                        out.push_str(&format!("{pad}- {}", &inner[indent + 2..]));
                    }
                    _ => out.push_str(&format!("{pad}- {}\n", scalar(item))),
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar(other))),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

impl wirespeed_report::Render for Manifests {
    fn render(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "# wirespeed deploy kubernetes: apply after the key's Secret exists (docs/deploy.md)"
        )?;
        for m in &self.manifests {
            let mut text = String::new();
            yaml(m, 0, &mut text);
            write!(out, "---\n{text}")?;
        }
        Ok(())
    }
}
