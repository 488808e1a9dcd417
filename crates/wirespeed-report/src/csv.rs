//! CSV for spreadsheets (RFC 4180 quoting), one header row then data rows.

use std::fmt;

/// A CSV table built row by row.
#[derive(Debug, Clone, Default)]
pub struct Csv {
    lines: Vec<String>,
}

impl Csv {
    /// A table with these column names.
    pub fn new<I: IntoIterator<Item = S>, S: AsRef<str>>(header: I) -> Csv {
        let mut csv = Csv::default();
        csv.row(header);
        csv
    }

    /// Appends a row; cells with commas, quotes or line breaks are quoted.
    pub fn row<I: IntoIterator<Item = S>, S: AsRef<str>>(&mut self, cells: I) -> &mut Csv {
        let cells: Vec<String> = cells.into_iter().map(|c| quote(c.as_ref())).collect();
        self.lines.push(cells.join(","));
        self
    }
}

fn quote(cell: &str) -> String {
    if cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_string()
    }
}

impl fmt::Display for Csv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in &self.lines {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}
