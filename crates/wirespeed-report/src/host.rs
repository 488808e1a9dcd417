//! Facts about the machine a result was measured on, so that two results can be compared.

use serde::{Deserialize, Serialize};

/// The host's kernel, processor and size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostFacts {
    /// Host name.
    pub hostname: String,
    /// Operating system family (`linux`, `macos`, ...).
    pub os: String,
    /// Kernel release, such as `6.1.0-18-amd64`.
    pub kernel: String,
    /// Processor model name.
    pub cpu_model: String,
    /// Processors this process may run on.
    pub cores: usize,
}

impl HostFacts {
    /// Reads the facts from the running system; what cannot be read is `"unknown"`.
    pub fn collect() -> HostFacts {
        let read = |path: &str| {
            std::fs::read_to_string(path)
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unknown".to_string())
        };
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".to_string());
        HostFacts {
            hostname: read("/proc/sys/kernel/hostname"),
            os: std::env::consts::OS.to_string(),
            kernel: read("/proc/sys/kernel/osrelease"),
            cpu_model,
            cores: std::thread::available_parallelism().map_or(1, usize::from),
        }
    }
}
