//! `-T/--title` and `--timestamps`: what iperf3 puts at the start of every output line, the
//! local time first, then the title and two spaces, so that the output of several runs or hosts
//! interleaved in one log can be told apart and placed in time. Each line is stamped when its
//! first byte is written, not when the test started.

use std::io::{self, Write};

use wirespeed_net::localtime::StampFormat;

/// iperf3's default stamp: the locale's date and time, then a space.
pub(crate) const DEFAULT_STAMP_FORMAT: &str = "%c ";

/// The longest title taken, in characters: a label, not a paragraph.
const MAX_TITLE_CHARS: usize = 200;

/// What goes before each line; empty when neither flag is given.
#[derive(Debug, Clone, Default)]
#[doc(hidden)]
pub struct LinePrefix {
    title: Option<String>,
    stamp: Option<StampFormat>,
}

impl LinePrefix {
    /// From the flags, checked: the error names the flag and the fix.
    #[doc(hidden)]
    pub fn new(title: Option<&str>, timestamps: Option<&str>) -> anyhow::Result<LinePrefix> {
        if let Some(t) = title {
            check_title(t)?;
        }
        let stamp = timestamps
            .map(|f| StampFormat::new(f).map_err(|e| anyhow::anyhow!("--timestamps: {e}")))
            .transpose()?;
        Ok(LinePrefix {
            title: title.map(str::to_string),
            stamp,
        })
    }

    /// Whether anything is put before lines.
    pub(crate) fn is_empty(&self) -> bool {
        self.title.is_none() && self.stamp.is_none()
    }

    /// The text before a line written now.
    pub(crate) fn text(&self) -> String {
        let mut text = self
            .stamp
            .as_ref()
            .map(StampFormat::now)
            .unwrap_or_default();
        if let Some(t) = &self.title {
            text.push_str(t);
            text.push_str(":  ");
        }
        text
    }

    /// `out` with this prefix before each of its lines.
    #[doc(hidden)]
    pub fn wrap<W: Write>(&self, out: W) -> Prefixed<'_, W> {
        Prefixed {
            out,
            prefix: self,
            line_start: true,
        }
    }
}

/// A title is a label on one line: bounded, printable.
pub(crate) fn check_title(title: &str) -> anyhow::Result<()> {
    if title.is_empty() {
        anyhow::bail!("-T/--title is empty: give a label (-T h1-h2), or drop it");
    }
    if title.chars().count() > MAX_TITLE_CHARS {
        anyhow::bail!(
            "-T/--title is {} characters long: give at most {MAX_TITLE_CHARS}",
            title.chars().count()
        );
    }
    if title.chars().any(char::is_control) {
        anyhow::bail!(
            "-T/--title holds a control character (a line break, a tab, an escape): it starts every line; use printable text"
        );
    }
    Ok(())
}

/// A writer that puts the prefix before every line written through it.
#[doc(hidden)]
pub struct Prefixed<'a, W: Write> {
    out: W,
    prefix: &'a LinePrefix,
    line_start: bool,
}

impl<W: Write> Write for Prefixed<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.prefix.is_empty() {
            return self.out.write(buf);
        }
        let mut rest = buf;
        while !rest.is_empty() {
            if self.line_start {
                self.out.write_all(self.prefix.text().as_bytes())?;
                self.line_start = false;
            }
            let cut = rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(rest.len(), |i| i + 1);
            self.out.write_all(&rest[..cut])?;
            self.line_start = rest[cut - 1] == b'\n';
            rest = &rest[cut..];
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
