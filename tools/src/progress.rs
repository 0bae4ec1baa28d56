//! Progress bars for the engine's [`Reporter`], with indicatif.
//!
//! A bar appears only once its task has run for a second, and only when stderr
//! is a terminal (indicatif hides it otherwise); `-q` hides bars and notes.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use webmill::progress::{Reporter, Task, Unit};

/// Reporter drawing indicatif bars on stderr.
pub struct BarReporter {
    multi: MultiProgress,
    quiet: bool,
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
        }
    }
}

struct BarTask {
    bar: ProgressBar,
    multi: MultiProgress,
    started: Instant,
    shown: Mutex<bool>,
}

impl BarTask {
    fn maybe_show(&self) {
        if self.started.elapsed() < Duration::from_secs(1) {
            return;
        }
        let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        if !*shown {
            *shown = true;
            let bar = self.multi.add(self.bar.clone());
            bar.enable_steady_tick(Duration::from_millis(200));
        }
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
            started: Instant::now(),
            shown: Mutex::new(false),
        })
    }

    fn note(&self, line: &str) {
        if self.quiet {
            return;
        }
        if self.multi.is_hidden() {
            eprintln!("{line}");
        } else {
            let _ = self.multi.println(line);
        }
    }
}
