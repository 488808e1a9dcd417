//! The unit tests of wirespeed-report, one module per module of the library (`plot` here tests
//! `wirespeed_report::plot`; `document`, `csv` and `table` test the items the library
//! re-exports from its private modules of those names).

mod csv;
mod decode;
mod document;
mod html;
mod plot;
mod table;
