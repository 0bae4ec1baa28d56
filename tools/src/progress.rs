//! Progress bars for the engine's [`Reporter`], with indicatif.
//!
//! A bar appears only once its task has run for a second, and only when stderr
//! is a terminal (indicatif hides it otherwise); `-q` hides bars and notes.
//! For `webmill run`, bars go under the running stage's line (an anchor) and,
//! when stderr is not a terminal, a task that runs long logs a plain line
//! every [`LOG_EVERY`] instead.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use webmill::progress::{Reporter, Task, Unit};

/// How often a long task logs a line when stderr is not a terminal.
pub const LOG_EVERY: Duration = Duration::from_secs(10);

/// Reporter drawing indicatif bars on stderr.
pub struct BarReporter {
    multi: MultiProgress,
    quiet: bool,
    /// New bars go right below this one (the running stage's line).
    anchor: Arc<Mutex<Option<ProgressBar>>>,
    /// Log long tasks as plain lines (stderr is not a terminal).
    log: bool,
    /// Notes holding this text are not shown (what another display shows).
    hide_notes: Option<&'static str>,
}

impl BarReporter {
    pub fn new(quiet: bool) -> BarReporter {
        let target = if quiet || !std::io::stderr().is_terminal() {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        BarReporter {
            multi: MultiProgress::with_draw_target(target),
            quiet,
            anchor: Arc::default(),
            log: false,
            hide_notes: None,
        }
    }

    /// The same reporter, logging long tasks as plain lines every
    /// [`LOG_EVERY`] when it draws no bars (and is not quiet).
    pub fn logging_when_hidden(mut self) -> BarReporter {
        self.log = !self.quiet && self.multi.is_hidden();
        self
    }

    /// The same reporter, not showing notes that contain `text`.
    pub fn hiding_notes(mut self, text: &'static str) -> BarReporter {
        self.hide_notes = Some(text);
        self
    }

    /// The bars it draws into.
    pub fn multi(&self) -> &MultiProgress {
        &self.multi
    }

    /// Puts the bars of tasks started from now on below `bar` (or at the
    /// bottom, with `None`).
    pub fn set_anchor(&self, bar: Option<ProgressBar>) {
        *self.anchor.lock().unwrap_or_else(|e| e.into_inner()) = bar;
    }

    /// `true` when nothing is drawn (quiet, or stderr is not a terminal).
    pub fn hidden(&self) -> bool {
        self.multi.is_hidden()
    }
}

struct BarTask {
    bar: ProgressBar,
    multi: MultiProgress,
    anchor: Option<ProgressBar>,
    started: Instant,
    shown: Mutex<bool>,
    /// When the last plain line was logged, if the task logs.
    logged: Option<Mutex<Instant>>,
}

impl BarTask {
    fn maybe_show(&self) {
        if let Some(last) = &self.logged {
            self.maybe_log(last);
            return;
        }
        if self.started.elapsed() < Duration::from_secs(1) {
            return;
        }
        let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        if !*shown {
            *shown = true;
            let bar = match &self.anchor {
                Some(a) => self.multi.insert_after(a, self.bar.clone()),
                None => self.multi.add(self.bar.clone()),
            };
            bar.enable_steady_tick(Duration::from_millis(200));
        }
    }

    /// Logs `label: position/total (percent), rate, ETA` every [`LOG_EVERY`].
    fn maybe_log(&self, last: &Mutex<Instant>) {
        let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
        if last.elapsed() < LOG_EVERY {
            return;
        }
        *last = Instant::now();
        let pos = self.bar.position();
        let line = match self.bar.length() {
            Some(len) if len > 0 => format!(
                "{}: {}/{} ({:.0}%), {:.0}/s, ETA {}",
                self.bar.prefix(),
                pos,
                len,
                pos as f64 * 100.0 / len as f64,
                self.bar.per_sec(),
                indicatif::HumanDuration(self.bar.eta())
            ),
            _ => format!(
                "{}: {pos} so far, {:.0}/s",
                self.bar.prefix(),
                self.bar.per_sec()
            ),
        };
        eprintln!("{line}");
    }
}

impl Task for BarTask {
    fn inc(&self, n: u64) {
        self.bar.inc(n);
        self.maybe_show();
    }
    fn set_position(&self, pos: u64) {
        self.bar.set_position(pos);
        self.maybe_show();
    }
    fn set_message(&self, msg: String) {
        self.bar.set_message(msg);
        self.maybe_show();
    }
    fn set_total(&self, total: u64) {
        self.bar.set_length(total);
    }
}

impl Drop for BarTask {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
        self.multi.remove(&self.bar);
    }
}

impl Reporter for BarReporter {
    fn task(&self, label: &str, total: Option<u64>, unit: Unit) -> Box<dyn Task> {
        let (pos, rate) = match unit {
            Unit::Bytes => ("{bytes}/{total_bytes}", "{bytes_per_sec}"),
            Unit::Records => ("{human_pos}/{human_len}", "{per_sec}"),
            Unit::Steps => ("{pos}/{len}", "{per_sec}"),
        };
        let template = if total.is_some() {
            format!("{{prefix}} [{{bar:30}}] {pos} {rate} ETA {{eta}} {{msg}}")
        } else {
            let pos = pos.split('/').next().unwrap_or("{pos}");
            format!("{{prefix}} {{spinner}} {pos} {rate} {{elapsed}} {{msg}}")
        };
        let style = ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::hidden())
            .with_style(style)
            .with_prefix(label.to_string());
        Box::new(BarTask {
            bar,
            multi: self.multi.clone(),
            anchor: self
                .anchor
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            started: Instant::now(),
            shown: Mutex::new(false),
            logged: self.log.then(|| Mutex::new(Instant::now())),
        })
    }

    fn note(&self, line: &str) {
        if self.quiet || self.hide_notes.is_some_and(|t| line.contains(t)) {
            return;
        }
        if self.multi.is_hidden() {
            eprintln!("{line}");
        } else {
            let _ = self.multi.println(line);
        }
    }
}
