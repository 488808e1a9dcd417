//! The report in a real browser (issue 34): one page holding a document of every command the
//! report draws, opened once by headless Chromium at a 1280-pixel viewport. The test fails on
//! a console message (the page has no script of its own, so any is an error: a CSP violation,
//! a parse error), on plot text whose rendered size is under 12 pixels or that runs off its
//! plot, and on plot text (a legend, a label) drawn over the plot's points or lines. The
//! documents are saved ones (`testdata/report/`, the report's own fixtures, and a golden
//! file), so no measurement runs here; a document that no longer fits its command's
//! type fails too.
//!
//! Where Chromium is absent (`scripts/install-deps.sh` installs Debian's `chromium`) the test
//! says it skipped and why. Chromium runs in a process group of its own, bounded in time,
//! killed by that group's id, with its profile in a scratch directory that is removed.

use std::fs;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{Scratch, wirespeed};

/// The smallest text a reader should be asked to read on a 1280-pixel screen.
const MIN_TEXT_PX: f64 = 12.0;
/// How long Chromium may take to load and lay out the page (seconds on an idle machine; a
/// busy 2-core CI runner is allowed far more).
const DEADLINE: Duration = Duration::from_secs(120);
/// The nonce that lets the one injected script through the page's Content-Security-Policy,
/// which otherwise stays as the report writes it (so a remote load would still be refused
/// and reported on the console).
const NONCE: &str = "wirespeed-browser-check";

/// Chromium's executable: `WIRESPEED_CHROMIUM`, else the first of Debian's and others' names on
/// `PATH`.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("WIRESPEED_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// Every saved document the page is made of: the report's own fixtures (a document of every
/// command it has a view for, `testdata/report/`) and the golden files of `model`.
fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = fs::read_dir(root.join("testdata/report"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "jsonl"))
        .collect();
    files.push(root.join("tests/golden/model-compare.json"));
    files.sort();
    files
}

/// The script that measures what the browser drew and writes it into the page, where
/// `--dump-dom` prints it: for every text of every plot, its rendered size (its computed font
/// size times the plot's scale on screen) and how far it runs past its plot's edges.
const PROBE: &str = r#"
(function () {
  // Where a plot drew its data, on screen: the boxes of its points and markers (circles,
  // triangles) and points every 2 px along its lines. Rectangles are left out: the
  // background, heatmap cells and phase boxes are meant to sit under text.
  function marks(svg) {
    var boxes = [], pts = [];
    svg.querySelectorAll('circle, polygon').forEach(function (c) {
      boxes.push(c.getBoundingClientRect());
    });
    svg.querySelectorAll('polyline').forEach(function (l) {
      var m = l.getScreenCTM();
      if (!m) { return; }
      var prev = null;
      for (var k = 0; k < l.points.numberOfItems && k < 4000; k++) {
        var p = l.points.getItem(k).matrixTransform(m);
        if (prev) {
          var steps = Math.min(Math.ceil(Math.hypot(p.x - prev.x, p.y - prev.y) / 2), 2000);
          for (var j = 1; j <= steps; j++) {
            pts.push({ x: prev.x + (p.x - prev.x) * j / steps, y: prev.y + (p.y - prev.y) * j / steps });
          }
        } else {
          pts.push(p);
        }
        prev = p;
      }
    });
    return { boxes: boxes, pts: pts };
  }
  // Texts of `svg` (legend lines, tick labels, captions) that cover its data by more than a
  // pixel: a legend laid over a curve hides the data it names.
  function covering(svg) {
    var d = marks(svg), found = [];
    svg.querySelectorAll('text').forEach(function (t) {
      var label = t.textContent.trim();
      if (!label) { return; }
      var r = t.getBoundingClientRect();
      var l = r.left + 1, rt = r.right - 1, tp = r.top + 1, b = r.bottom - 1;
      var hit = d.boxes.some(function (c) {
        return c.right > l && c.left < rt && c.bottom > tp && c.top < b;
      }) || d.pts.some(function (p) {
        return p.x > l && p.x < rt && p.y > tp && p.y < b;
      });
      if (hit) { found.push(label.slice(0, 48)); }
    });
    return found;
  }
  // The check checked: a legend drawn over a point and a line is found.
  var bad = document.createElement('div');
  bad.innerHTML = '<svg width="200" height="100" viewBox="0 0 200 100">' +
    '<polyline points="0,50 200,50" stroke="black" fill="none"/>' +
    '<circle cx="40" cy="20" r="3"/>' +
    '<text x="30" y="25" font-size="14">stream 1</text>' +
    '<text x="120" y="55" font-size="14">stream 2</text>' +
    '<text x="120" y="95" font-size="14">clear</text></svg>';
  document.body.appendChild(bad);
  var selftest = covering(bad.querySelector('svg'));
  bad.remove();
  var texts = [], overlaps = [];
  var plots = document.querySelectorAll('svg.plot');
  plots.forEach(function (svg, i) {
    covering(svg).forEach(function (label) { overlaps.push({ plot: i, text: label }); });
    var box = svg.getBoundingClientRect();
    svg.querySelectorAll('text').forEach(function (t) {
      var label = t.textContent.trim();
      if (!label) { return; }
      var m = t.getScreenCTM();
      var scale = m ? Math.sqrt(m.a * m.a + m.b * m.b) : 1;
      var px = parseFloat(getComputedStyle(t).fontSize) * scale;
      var r = t.getBoundingClientRect();
      var out = Math.max(box.left - r.left, r.right - box.right, box.top - r.top, r.bottom - box.bottom, 0);
      texts.push({ plot: i, px: px, out: out, text: label.slice(0, 48) });
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'ws-findings';
  pre.textContent = JSON.stringify({ viewport: document.documentElement.clientWidth, plots: plots.length, texts: texts, overlaps: overlaps, selftest: selftest });
  document.body.appendChild(pre);
})();
"#;

/// The page with the probe injected, its policy otherwise untouched.
fn instrumented(page: &str) -> String {
    let policy = "img-src data:\">";
    assert!(
        page.contains(policy),
        "the page's Content-Security-Policy changed: update the injection"
    );
    page.replacen(
        policy,
        &format!("img-src data:; script-src 'nonce-{NONCE}'\">"),
        1,
    )
    .replacen(
        "</body>",
        &format!("<script nonce=\"{NONCE}\">{PROBE}</script>\n</body>"),
        1,
    )
}

/// What Chromium printed: the DOM after the page loaded, and its log.
struct Browser {
    dom: String,
    log: String,
}

/// Opens `page` once in headless Chromium at 1280 pixels and returns the DOM and the log.
fn open(chromium: &Path, page: &Path, scratch: &Path) -> Browser {
    let profile = scratch.join("profile");
    let (dom_path, log_path) = (scratch.join("dom.html"), scratch.join("chromium.log"));
    let mut command = Command::new(chromium);
    command
        .args([
            "--headless",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--hide-scrollbars",
            "--window-size=1280,2000",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(fs::File::create(&dom_path).unwrap())
        .stderr(fs::File::create(&log_path).unwrap())
        // Its own group, so that its helper processes go with it by one id.
        .process_group(0);
    // Root (CI) cannot use Chromium's sandbox.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        command.arg("--no-sandbox");
    }
    let mut child = command.spawn().expect("chromium starts");
    let group = child.id() as i32;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > DEADLINE {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // The group this test started, whether it finished or not: no helper outlives the test.
    // SAFETY: kill has no memory preconditions; a group already gone gives ESRCH.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    if status.is_none() {
        let _ = child.wait();
    }
    let mut log = String::new();
    fs::File::open(&log_path)
        .unwrap()
        .take(1 << 20)
        .read_to_string(&mut log)
        .unwrap();
    let status = status.unwrap_or_else(|| {
        panic!(
            "chromium did not finish within {} s: {log}",
            DEADLINE.as_secs()
        )
    });
    assert!(status.success(), "chromium failed ({status}): {log}");
    Browser {
        dom: fs::read_to_string(&dom_path).unwrap(),
        log,
    }
}

#[derive(serde::Deserialize)]
struct Findings {
    viewport: f64,
    plots: usize,
    texts: Vec<Text>,
    /// Plot texts drawn over the plot's data.
    overlaps: Vec<Overlap>,
    /// What the overlap check found in a drawing made to fail it.
    selftest: Vec<String>,
}

#[derive(serde::Deserialize, Debug)]
#[allow(dead_code)] // read through Debug, in the failure message
struct Overlap {
    plot: usize,
    text: String,
}

#[derive(serde::Deserialize)]
struct Text {
    plot: usize,
    px: f64,
    out: f64,
    text: String,
}

#[test]
fn every_commands_report_reads_in_chromium_at_1280_pixels() {
    let Some(chromium) = chromium() else {
        eprintln!(
            "skipped: no chromium on PATH (apt-get install chromium, as scripts/install-deps.sh \
             does, or set WIRESPEED_CHROMIUM)"
        );
        return;
    };
    let scratch = Scratch::new("report-browser");
    let page = scratch.path("report.html");
    let mut args: Vec<String> = vec!["report".into()];
    args.extend(documents().iter().map(|p| p.display().to_string()));
    args.extend(["-o".into(), page.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = wirespeed(&args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let html = fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("does not match this version"),
        "a saved document in testdata/report no longer fits its command's type"
    );
    let drawn = html.matches("<svg class=\"plot\"").count();
    let checked = scratch.path("checked.html");
    fs::write(&checked, instrumented(&html)).unwrap();

    let browser = open(&chromium, &checked, scratch.dir());

    let console: Vec<&str> = browser
        .log
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let json = browser
        .dom
        .split("<pre id=\"ws-findings\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the probe wrote nothing: {}", browser.log));
    let json = json
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let findings: Findings = serde_json::from_str(&json).unwrap();
    assert!(
        (1200.0..=1280.0).contains(&findings.viewport),
        "viewport {} px, not 1280",
        findings.viewport
    );
    assert_eq!(findings.plots, drawn, "every plot of the page was laid out");
    assert!(
        drawn >= 12,
        "{drawn} plots: a page of every command draws more"
    );
    let small: Vec<String> = findings
        .texts
        .iter()
        .filter(|t| t.px < MIN_TEXT_PX)
        .map(|t| format!("plot {}: {:.1} px {:?}", t.plot, t.px, t.text))
        .collect();
    assert!(
        small.is_empty(),
        "{} of {} plot texts under {MIN_TEXT_PX} px: {small:#?}",
        small.len(),
        findings.texts.len()
    );
    let clipped: Vec<String> = findings
        .texts
        .iter()
        .filter(|t| t.out > 2.0)
        .map(|t| format!("plot {}: {:.0} px out {:?}", t.plot, t.out, t.text))
        .collect();
    assert!(
        clipped.is_empty(),
        "text past its plot's edge: {clipped:#?}"
    );
    // A legend beside the plot never covers its data; one laid over it (as the tcp plot's
    // once covered stream 1's line) is found from the boxes the browser drew.
    assert_eq!(
        findings.selftest,
        ["stream 1", "stream 2"],
        "the overlap check no longer finds a legend drawn over a point and a line"
    );
    assert!(
        findings.overlaps.is_empty(),
        "plot text over plotted data: {:#?}",
        findings.overlaps
    );
    eprintln!(
        "chromium: {drawn} plots, {} texts, smallest {:.1} px",
        findings.texts.len(),
        findings
            .texts
            .iter()
            .map(|t| t.px)
            .fold(f64::INFINITY, f64::min)
    );
}
