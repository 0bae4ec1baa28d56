//! One display for a whole job (`webmill run`): a header with the overall
//! elapsed time, a line per stage (done, running, waiting) and, below the
//! running stage's line, its task bars with rate and ETA (the
//! [`BarReporter`]'s). When stderr is not a terminal the same events are
//! plain log lines (`[0:00:12] pagerank: running`), and long tasks log their
//! progress every few seconds; with `-q`, nothing.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use webmill::job::plan::StageState;
use webmill::job::{Manifest, Published, StageId};
use webmill::pipeline::{How, Observer};
use webmill::registry::Registry;

use crate::progress::BarReporter;

/// The stages running now, shared with the Ctrl-C handler.
pub type Running = Arc<Mutex<Vec<StageId>>>;

/// The display of a job's stages.
pub struct JobDisplay {
    reporter: Arc<BarReporter>,
    header: Option<ProgressBar>,
    lines: Vec<(StageId, ProgressBar)>,
    started: Instant,
    plain: bool,
    running: Running,
    ended: Vec<(StageId, How)>,
    job: PathBuf,
    registry: Registry,
    /// Stages that had finished before this run began: they are checked,
    /// and skipped unless their inputs or outputs changed, so they are not
    /// announced as running.
    finished_before: Vec<StageId>,
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner())
}

impl JobDisplay {
    /// A display of `stages` (in run order) for the job `name`, their
    /// states as `manifest` tells them, drawn through `reporter`.
    pub fn new(
        reporter: Arc<BarReporter>,
        name: &str,
        stages: &[StageId],
        manifest: &Manifest,
        quiet: bool,
    ) -> JobDisplay {
        let plain = !quiet && reporter.hidden();
        let mut header = None;
        let mut lines = Vec::new();
        if !reporter.hidden() {
            let multi = reporter.multi();
            let h = multi.add(ProgressBar::with_draw_target(
                None,
                ProgressDrawTarget::hidden(),
            ));
            h.set_style(style(
                "webmill run {prefix} · elapsed {elapsed_precise} · {msg}",
            ));
            h.set_prefix(name.to_string());
            h.set_message(format!("0 of {} stages done", stages.len()));
            h.enable_steady_tick(Duration::from_millis(500));
            header = Some(h);
            for &s in stages {
                let bar = multi.add(ProgressBar::with_draw_target(
                    None,
                    ProgressDrawTarget::hidden(),
                ));
                bar.set_style(style("  {prefix} {msg}"));
                bar.set_prefix(format!("· {:<15}", s.name()));
                bar.set_message(match StageState::of(manifest, s) {
                    StageState::NotRun => "waiting",
                    StageState::Interrupted => "waiting (interrupted before: will resume)",
                    StageState::Finished => "waiting (finished before: checked, then skipped)",
                });
                bar.tick();
                lines.push((s, bar));
            }
        } else if plain {
            let states: Vec<String> = stages
                .iter()
                .map(|&s| match StageState::of(manifest, s) {
                    StageState::NotRun => s.name(),
                    StageState::Interrupted => format!("{s} (interrupted: resumes)"),
                    StageState::Finished => format!("{s} (finished before)"),
                })
                .collect();
            eprintln!("webmill run {name}: {}", states.join(" → "));
        }
        JobDisplay {
            reporter,
            header,
            lines,
            started: Instant::now(),
            plain,
            running: Arc::default(),
            ended: Vec::new(),
            job: PathBuf::from(name),
            registry: Registry::standard(),
            finished_before: stages
                .iter()
                .copied()
                .filter(|&s| StageState::of(manifest, s) == StageState::Finished)
                .collect(),
        }
    }

    /// A stage's result in a few words, from its record.
    fn headline(&self, stage: StageId, record: &Published) -> String {
        self.registry
            .headline(&self.job, stage, record)
            .unwrap_or_else(|e| e.to_string())
    }

    /// The stages running now (for the Ctrl-C handler).
    pub fn running(&self) -> Running {
        Arc::clone(&self.running)
    }

    /// How each stage ended, in order.
    pub fn ended(&self) -> &[(StageId, How)] {
        &self.ended
    }

    /// Seconds since the display started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    fn line(&self, stage: StageId) -> Option<&ProgressBar> {
        self.lines.iter().find(|(s, _)| *s == stage).map(|(_, b)| b)
    }

    fn log(&self, line: &str) {
        if self.plain {
            let t = self.started.elapsed().as_secs();
            eprintln!("[{}:{:02}:{:02}] {line}", t / 3600, t / 60 % 60, t % 60);
        }
    }

    /// Marks the running stages as failed (an error ends the run).
    pub fn failed(&self) {
        let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        for &s in running.iter() {
            if let Some(bar) = self.line(s) {
                bar.disable_steady_tick();
                bar.set_style(style("  {prefix} {msg}"));
                bar.set_prefix(format!("✗ {:<15}", s.name()));
                bar.set_message("stopped");
                bar.tick();
            }
            self.log(&format!("{s}: stopped"));
        }
    }

    /// Draws the stage lines one last time as they are and stops drawing,
    /// so that what is printed next (the summary) is never drawn over:
    /// every bar is finished, which draws its final state (a plain tick may
    /// be dropped by the draw rate limit) and makes it inert.
    pub fn finish(&self) {
        self.reporter.set_anchor(None);
        if let Some(h) = &self.header {
            h.disable_steady_tick();
            h.finish_with_message(format!(
                "{} of {} stages done",
                self.ended.len(),
                self.lines.len()
            ));
        }
        for (_, bar) in &self.lines {
            bar.disable_steady_tick();
            bar.finish();
        }
    }
}

impl Observer for JobDisplay {
    fn starting(&mut self, stages: &[StageId]) {
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = stages.to_vec();
        for &s in stages {
            let checking = self.finished_before.contains(&s);
            if let Some(bar) = self.line(s) {
                bar.set_style(style(if checking {
                    "  {prefix} {spinner} checking (finished before) {elapsed}"
                } else {
                    "  {prefix} {spinner} running {elapsed}"
                }));
                bar.set_prefix(format!("▸ {:<15}", s.name()));
                bar.reset_elapsed();
                bar.enable_steady_tick(Duration::from_millis(200));
            }
            // A stage that finished before says how it ended (skipped, or
            // recomputed with the reason noted), not that it is running.
            if !checking {
                self.log(&format!("{s}: running"));
            }
        }
        // The running stages' task bars go below the last of them.
        let anchor = stages.last().and_then(|&s| self.line(s)).cloned();
        self.reporter.set_anchor(anchor);
    }

    fn finished(&mut self, stage: StageId, how: How, record: &Published) {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|&s| s != stage);
        self.ended.push((stage, how));
        let headline = self.headline(stage, record);
        let what = match how {
            How::Skipped => format!("skipped: finished before — {headline}"),
            How::Ran => format!("done in {:.1} s — {headline}", record.figures.seconds),
            How::Resumed => format!(
                "resumed, done in {:.1} s — {headline}",
                record.figures.seconds
            ),
        };
        if let Some(bar) = self.line(stage) {
            bar.disable_steady_tick();
            bar.set_style(style("  {prefix} {msg}"));
            bar.set_prefix(format!("✓ {:<15}", stage.name()));
            bar.set_message(what.clone());
            bar.tick();
        }
        if let Some(h) = &self.header {
            h.set_message(format!(
                "{} of {} stages done",
                self.ended.len(),
                self.lines.len()
            ));
        }
        self.log(&format!("{stage}: {what}"));
    }
}
