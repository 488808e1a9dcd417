//! How wirespeed shows results: one document shape for every command, printed as a human table
//! or as versioned JSON by one writer.
//!
//! A command builds its result struct (the struct is the schema: units live in field names,
//! such as `goodput_bits_per_second`), wraps it in a [`Document`] with its parameters and the
//! host's facts, and hands it to [`emit`]. Measuring code never prints.
//!
//! Modules: `document` (the document and its one writer), `host` (the machine's facts),
//! `table` (aligned text tables), `csv`, [`plot`] (SVG plots), [`decode`] (a document read back
//! into the types that wrote it), [`html`] (the report page).

#![warn(missing_docs, unreachable_pub)]

mod csv;
pub mod decode;
mod document;
mod host;
pub mod html;
pub mod plot;
mod table;

pub use csv::Csv;
pub use document::{
    Document, Finding, OutputFormat, Render, Severity, UNNAMED_KIND, emit, is_kind, to_json,
};
pub use host::HostFacts;
pub use table::Table;
