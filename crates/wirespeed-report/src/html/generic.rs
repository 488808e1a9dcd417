//! Any JSON value as nested tables: the rendering of parameters, of the full result behind
//! each section, and of documents whose schema this report does not know. Objects become
//! key/value tables, arrays of objects become tables with a column per key, and everything is
//! bounded (depth, rows, cells) so that a large or hostile document gives a readable page.

use serde_json::Value;

use super::markup::{Cell, HtmlTable, Markup, by_unit};

/// Levels of nesting drawn before the rest is summarised.
const MAX_LEVELS: usize = 8;
/// Rows of one array drawn.
const MAX_ROWS: usize = 60;
/// Columns of one array-of-objects table.
const MAX_COLUMNS: usize = 14;
/// Scalars of one array listed inline.
const MAX_INLINE: usize = 40;

/// A budget of table cells for one rendering, so that no document can make the page huge.
#[derive(Debug)]
pub struct Budget(usize);

impl Budget {
    /// A budget of `cells` table cells.
    pub fn new(cells: usize) -> Budget {
        Budget(cells)
    }

    fn take(&mut self, n: usize) -> bool {
        if self.0 >= n {
            self.0 -= n;
            true
        } else {
            self.0 = 0;
            false
        }
    }
}

/// `value` as nested tables; `key` is its field name (for units), if it has one.
pub fn value_markup(key: &str, value: &Value, budget: &mut Budget) -> Markup {
    render(key, value, 0, budget)
}

fn render(key: &str, value: &Value, level: usize, budget: &mut Budget) -> Markup {
    let mut m = Markup::new();
    match value {
        Value::Object(map) if map.is_empty() => {
            m.lit("<span class=\"dim\">(empty)</span>");
        }
        Value::Array(items) if items.is_empty() => {
            m.lit("<span class=\"dim\">(none)</span>");
        }
        Value::Object(_) | Value::Array(_) if level >= MAX_LEVELS => {
            m.lit("<span class=\"dim\">(nested deeper: see the JSON file)</span>");
        }
        Value::Object(map) => {
            let mut t = HtmlTable::new(Vec::<String>::new());
            for (k, v) in map {
                if !budget.take(2) {
                    t.row(vec![Cell::text("…"), Cell::text("(more fields not shown)")]);
                    break;
                }
                t.row(vec![
                    Cell::text(k.clone()),
                    Cell::Markup(render(k, v, level + 1, budget)),
                ]);
            }
            m.lit("<div class=\"kv\">").push(&t.markup()).lit("</div>");
        }
        Value::Array(items) if items.iter().all(is_scalar) => {
            let shown: Vec<String> = items
                .iter()
                .take(MAX_INLINE)
                .map(|v| scalar(key, v))
                .collect();
            budget.take(shown.len());
            m.text(&shown.join(", "));
            if items.len() > MAX_INLINE {
                m.lit(" <span class=\"dim\">… ")
                    .int(items.len() - MAX_INLINE)
                    .lit(" more</span>");
            }
        }
        Value::Array(items) if items.iter().all(Value::is_object) => {
            m.push(&object_rows(items, level, budget));
        }
        Value::Array(items) => {
            let mut t = HtmlTable::new(Vec::<String>::new());
            let mut shown = 0;
            for (i, v) in items.iter().take(MAX_ROWS).enumerate() {
                if !budget.take(2) {
                    break;
                }
                shown += 1;
                t.row(vec![
                    Cell::num((i + 1).to_string()),
                    Cell::Markup(render(key, v, level + 1, budget)),
                ]);
            }
            m.lit("<div class=\"kv\">").push(&t.markup()).lit("</div>");
            more_rows(&mut m, items.len(), shown);
        }
        scalar_value => {
            m.text(&scalar(key, scalar_value));
        }
    }
    m
}

fn more_rows(m: &mut Markup, total: usize, shown: usize) {
    if total > shown {
        m.lit("<p class=\"dim\">")
            .int(total - shown)
            .lit(" more rows not shown (the JSON file has them all)</p>");
    }
}

/// An array of objects as one table: a column per key, in the order keys first appear.
fn object_rows(items: &[Value], level: usize, budget: &mut Budget) -> Markup {
    let mut columns: Vec<&str> = Vec::new();
    for item in items.iter().take(MAX_ROWS) {
        if let Value::Object(map) = item {
            for k in map.keys() {
                if columns.len() < MAX_COLUMNS && !columns.contains(&k.as_str()) {
                    columns.push(k);
                }
            }
        }
    }
    let mut t = HtmlTable::new(columns.iter().map(|c| c.to_string()));
    let mut shown = 0;
    for item in items.iter().take(MAX_ROWS) {
        if !budget.take(columns.len()) {
            break;
        }
        shown += 1;
        let cells = columns
            .iter()
            .map(|c| match item.get(c) {
                None => Cell::text(""),
                Some(v) if is_scalar(v) => match v {
                    Value::Number(_) => Cell::num(scalar(c, v)),
                    _ => Cell::text(scalar(c, v)),
                },
                Some(v) => Cell::Markup(render(c, v, level + 1, budget)),
            })
            .collect();
        t.row(cells);
    }
    let mut m = Markup::new();
    m.lit("<div class=\"wide\">")
        .push(&t.markup())
        .lit("</div>");
    let hidden_columns = items
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|o| o.keys())
        .any(|k| !columns.contains(&k.as_str()));
    if hidden_columns {
        m.lit("<p class=\"dim\">more columns not shown (the JSON file has them all)</p>");
    }
    more_rows(&mut m, items.len(), shown);
    m
}

pub(crate) fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

/// A scalar as text: numbers by the unit their key names, null as a dash.
pub fn scalar(key: &str, v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        // Integers beyond f64's 53 bits (seeds, identifiers) are printed exactly, not rounded.
        Value::Number(n) if n.as_u64().is_some_and(|u| u > 1 << 53) => n.to_string(),
        Value::Number(n) if n.as_i64().is_some_and(|i| i < -(1 << 53)) => n.to_string(),
        Value::Number(n) => n
            .as_f64()
            .map_or_else(|| n.to_string(), |f| by_unit(key, f)),
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{} items]", a.len()),
        Value::Object(o) => format!("{{{} fields}}", o.len()),
    }
}

/// The scalar fields at the top of a result, formatted by the units in their names.
pub(crate) fn scalars(heading: &str, result: &Value) -> Markup {
    let mut t = HtmlTable::new(["quantity", "value"]);
    if let Value::Object(map) = result {
        for (k, v) in map.iter().filter(|(_, v)| is_scalar(v)) {
            t.row(vec![
                Cell::text(k.replace('_', " ")),
                Cell::num(scalar(k, v)),
            ]);
        }
    }
    let mut m = Markup::new();
    if !t.is_empty() {
        m.heading(heading);
        m.push(&t.markup());
    }
    m
}
