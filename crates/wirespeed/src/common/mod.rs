//! What every command shares: output paths and formats, common flags, host facts, the embedded
//! data files, Ctrl-C and exit statuses, progress lines, the runs file, schedules, metrics files,
//! `--brief`'s headlines, the line prefix of `-T`/`--timestamps` and the install aids (completions, man pages).
//! Nothing here imports a command (`tests/layers.rs` checks it).

pub mod brief;
pub mod data;
pub mod exit_status;
pub mod flags;
pub mod host;
pub mod install_aids;
pub mod interrupt;
pub mod line_prefix;
pub mod metrics;
pub mod output;
pub mod progress;
pub mod runs_file;
pub mod schedule;
