//! Flags that mean the same on every command that takes them, defined once and flattened in
//! (as `OutputArgs` is for `--json` and `-f`).

use std::path::PathBuf;

use clap::Args;
use wirespeed_net::auth::AuthKey;

/// `--auth-key-file`: the key a client proves to an agent that asks for one.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct KeyArgs {
    /// A file with the agent's pre-shared key, if it asks for one (an HMAC-SHA256 challenge;
    /// the same file the agent was started with).
    #[arg(long, value_name = "FILE")]
    pub(crate) auth_key_file: Option<PathBuf>,
}

impl KeyArgs {
    /// The key, read and checked, if a file was given.
    pub(crate) fn load(&self) -> anyhow::Result<Option<AuthKey>> {
        Ok(self
            .auth_key_file
            .as_deref()
            .map(AuthKey::from_file)
            .transpose()?)
    }
}

/// The value parser of a letter that used to mean something else in one command: it refuses
/// every value with the flag to use instead, so that `-n`, `-R` mean one thing everywhere
/// (`-n` an amount to send, `-R` the reverse direction) and an old command line fails with the
/// fix instead of a bare "unexpected argument".
pub(crate) fn moved_to(
    meaning: &'static str,
    instead: &'static str,
) -> impl Fn(&str) -> Result<String, String> + Clone + Send + Sync + 'static {
    move |_| Err(format!("{meaning}; use {instead} here"))
}

/// What `-n` means wherever it is taken.
pub(crate) const MOVED_N: &str =
    "-n is an amount to send in every command that takes it (tcp, udp, sweep, reproduce)";

/// What `-R` means wherever it is taken.
pub(crate) const MOVED_R: &str = "-R is the reverse direction (tcp, udp)";
