//! The files the program itself needs (the labs `reproduce` builds, the seed's model and probe
//! that `reproduce bellovin` compares), compiled into the binary so that an installed
//! `wirespeed` works from any directory with no source tree beside it. The repository's `labs/`
//! and `examples/` stay the place to read and edit them; a test keeps the two identical.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// One file of the repository, as it was when this binary was built.
#[derive(Debug, Clone, Copy)]
#[doc(hidden)]
pub struct DataFile {
    /// Its path in the repository (`labs/boggs-24.toml`), which names it in messages.
    pub path: &'static str,
    /// Its contents.
    pub text: &'static str,
}

/// Every topology of `labs/`.
#[doc(hidden)]
pub const LABS: &[DataFile] = &[
    DataFile {
        path: "labs/asymmetric.toml",
        text: include_str!("../../../../labs/asymmetric.toml"),
    },
    DataFile {
        path: "labs/boggs-24.toml",
        text: include_str!("../../../../labs/boggs-24.toml"),
    },
    DataFile {
        path: "labs/bufferbloat.toml",
        text: include_str!("../../../../labs/bufferbloat.toml"),
    },
    DataFile {
        path: "labs/duplex-matched.toml",
        text: include_str!("../../../../labs/duplex-matched.toml"),
    },
    DataFile {
        path: "labs/duplex-mismatch-1990s-hosts.toml",
        text: include_str!("../../../../labs/duplex-mismatch-1990s-hosts.toml"),
    },
    DataFile {
        path: "labs/duplex-mismatch-1990s.toml",
        text: include_str!("../../../../labs/duplex-mismatch-1990s.toml"),
    },
    DataFile {
        path: "labs/duplex-mismatch.toml",
        text: include_str!("../../../../labs/duplex-mismatch.toml"),
    },
    DataFile {
        path: "labs/probe-chain.toml",
        text: include_str!("../../../../labs/probe-chain.toml"),
    },
    DataFile {
        path: "labs/router-chain.toml",
        text: include_str!("../../../../labs/router-chain.toml"),
    },
    DataFile {
        path: "labs/seed-001-path.toml",
        text: include_str!("../../../../labs/seed-001-path.toml"),
    },
    DataFile {
        path: "labs/seed-004-sun3.toml",
        text: include_str!("../../../../labs/seed-004-sun3.toml"),
    },
    DataFile {
        path: "labs/shared-24.toml",
        text: include_str!("../../../../labs/shared-24.toml"),
    },
    DataFile {
        path: "labs/t1-path.toml",
        text: include_str!("../../../../labs/t1-path.toml"),
    },
    DataFile {
        path: "labs/two-host-10m.toml",
        text: include_str!("../../../../labs/two-host-10m.toml"),
    },
];

/// Every file of `examples/`.
#[doc(hidden)]
pub const EXAMPLES: &[DataFile] = &[
    DataFile {
        path: "examples/bellovin-1992-ih-probe.json",
        text: include_str!("../../../../examples/bellovin-1992-ih-probe.json"),
    },
    DataFile {
        path: "examples/bellovin-1992.toml",
        text: include_str!("../../../../examples/bellovin-1992.toml"),
    },
    DataFile {
        path: "examples/iperf3-tcp.json",
        text: include_str!("../../../../examples/iperf3-tcp.json"),
    },
];

/// The built-in file `dir/name` (`dir` is `labs` or `examples`).
pub(crate) fn builtin(dir: &str, name: &str) -> anyhow::Result<DataFile> {
    let wanted = format!("{dir}/{name}");
    LABS.iter()
        .chain(EXAMPLES)
        .find(|f| f.path == wanted)
        .copied()
        .with_context(|| format!("{wanted} is not built into this wirespeed"))
}

/// A topology to bring up: built in, or a file the user named.
#[derive(Debug, Clone)]
#[doc(hidden)]
pub struct LabFile {
    path: PathBuf,
    text: std::borrow::Cow<'static, str>,
}

impl LabFile {
    /// The built-in `labs/NAME`.
    #[doc(hidden)]
    pub fn builtin(name: &str) -> anyhow::Result<LabFile> {
        let f = builtin("labs", name)?;
        Ok(LabFile {
            path: PathBuf::from(f.path),
            text: f.text.into(),
        })
    }

    /// A topology file the user gave.
    pub(crate) fn read(path: &Path) -> anyhow::Result<LabFile> {
        let text = read_user_file(path, MAX_TOML_BYTES, "topology")?;
        Ok(LabFile {
            path: path.to_path_buf(),
            text: text.into(),
        })
    }

    /// The path that names it (the repository path of a built-in one).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Parsed and checked; errors name the file and line.
    #[doc(hidden)]
    pub fn topology(&self) -> anyhow::Result<wirespeed_lab::Topology> {
        Ok(wirespeed_lab::Topology::parse(
            &self.text,
            &self.path.display().to_string(),
        )?)
    }
}

/// The most a TOML file the user gives (a topology, a model) may hold: the largest built-in
/// one is a few KiB, so this only stops a wrong file (a log, a disk image) from being read
/// whole into memory.
pub(crate) const MAX_TOML_BYTES: u64 = 4 << 20;

/// The text of a file the user named as `what`, refused without reading it whole when it is
/// over `limit` bytes (a wrong path can name a huge file or a device that never ends).
pub(crate) fn read_user_file(path: &Path, limit: u64, what: &str) -> anyhow::Result<String> {
    use std::io::Read;
    let shown = path.display();
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {what} {shown}"))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {what} {shown}"))?;
    if bytes.len() as u64 > limit {
        anyhow::bail!(
            "{what} {shown} is larger than {} MiB: is it the right file?",
            limit >> 20
        );
    }
    String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{what} {shown} is not UTF-8 text"))
}
