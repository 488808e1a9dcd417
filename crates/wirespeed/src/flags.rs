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
