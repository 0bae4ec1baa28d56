//! The job manifest, `job.json`: per stage, its published result (parameters,
//! the checksums of the inputs it read, its outputs, its figures) and the
//! attempt under way, if any. Specified in `formats/job-manifest.md`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::files::{JobFile, StageId};

/// Version of the manifest layout.
pub const MANIFEST_VERSION: u32 = 2;
/// File name of the manifest inside a job directory.
pub const MANIFEST: &str = "job.json";

/// A published output of a stage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Output {
    /// Path relative to the job directory ([`JobFile::name`]).
    pub path: String,
    /// Container kind tag, or `"svg"` for a plot.
    pub kind: String,
    /// File size in bytes.
    pub bytes: u64,
    /// Records in the file (0 for a plot).
    pub records: u64,
    /// The container's content checksum (crc32c, 8 hex digits); for a plot,
    /// the crc32c of its bytes.
    pub checksum: String,
}

/// Figures of a finished stage: what every stage measures, and its own
/// figures (its `Figures` type, serialized) in `extra`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Records produced (the stage's main unit: arcs for a graph import).
    pub records: u64,
    /// Bytes of all outputs.
    pub bytes: u64,
    /// Wall-clock seconds of the run that finished the stage.
    pub seconds: f64,
    /// Peak resident set size of that run, in bytes.
    pub peak_rss: u64,
    /// The stage's own figures.
    #[serde(default)]
    pub extra: serde_json::Map<String, Value>,
}

/// What a finished stage published.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Published {
    /// Parameters that determine the outputs.
    pub params: Value,
    /// The job files it read, each with its checksum at the time.
    pub inputs: BTreeMap<String, String>,
    /// Published outputs.
    pub outputs: Vec<Output>,
    /// Figures.
    pub figures: Figures,
    /// Unix time the run that finished it started.
    pub started: u64,
    /// Unix time it finished.
    pub finished: u64,
    /// Starts of that run (more than one means it resumed).
    pub attempts: u32,
}

/// A run that started and has not published (still running, or interrupted).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// Parameters it runs with.
    pub params: Value,
    /// Its inputs' checksums when it started.
    pub inputs: BTreeMap<String, String>,
    /// Unix time it was last started.
    pub started: u64,
    /// How many times it was started.
    pub attempts: u32,
}

/// The manifest's record of one stage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    /// The last result published, kept while a new run is under way: a forced
    /// or interrupted re-run never takes it away before its own is complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<Published>,
    /// The run under way or interrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<Attempt>,
    /// `true` between the moment a run's result was recorded and the moment
    /// its files were all moved into the job directory (see
    /// [`super::Job::open`], which finishes the move after a crash).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub moving: bool,
}

/// The job manifest.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    /// Manifest layout version.
    pub version: u32,
    /// Stages by name.
    pub stages: BTreeMap<String, StageRecord>,
}

impl Manifest {
    /// An empty manifest.
    pub fn new() -> Manifest {
        Manifest {
            version: MANIFEST_VERSION,
            stages: BTreeMap::new(),
        }
    }

    /// The record of `stage`, if any.
    pub fn record(&self, stage: StageId) -> Option<&StageRecord> {
        self.stages.get(&stage.name())
    }

    /// What `stage` published, if it finished.
    pub fn published(&self, stage: StageId) -> Option<&Published> {
        self.record(stage).and_then(|r| r.published.as_ref())
    }

    /// The stage whose published outputs include `file`, with that output.
    pub fn producer_of(&self, file: JobFile) -> Option<(StageId, &Output)> {
        let name = file.name();
        file.producers().iter().find_map(|&s| {
            self.published(s)
                .and_then(|p| p.outputs.iter().find(|o| o.path == name))
                .map(|o| (s, o))
        })
    }

    /// The checksum of every published file.
    pub fn current_checksums(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        for rec in self.stages.values() {
            if let Some(p) = &rec.published {
                for o in &p.outputs {
                    m.insert(o.path.clone(), o.checksum.clone());
                }
            }
        }
        m
    }

    /// Stages with a published result, in pipeline order (unknown names last).
    pub fn finished_in_order(&self) -> Vec<(String, &Published)> {
        let mut v: Vec<(String, &Published)> = self
            .stages
            .iter()
            .filter_map(|(n, r)| r.published.as_ref().map(|p| (n.clone(), p)))
            .collect();
        v.sort_by_key(|(n, _)| StageId::parse(n).map_or(usize::MAX, StageId::order));
        v
    }
}

/// Says how `now` differs from `before` (two parameter objects), naming each
/// changed parameter as its command-line flag: `--damping was 0.85, now 0.9`.
pub fn describe_change(before: &Value, now: &Value) -> String {
    let (Some(b), Some(n)) = (before.as_object(), now.as_object()) else {
        return format!("parameters were {before}, now {now}");
    };
    let mut keys: Vec<&String> = b.keys().chain(n.keys()).collect();
    keys.sort();
    keys.dedup();
    let show = |v: Option<&Value>| match v {
        None | Some(Value::Null) => "unset".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => {
            let s = v.to_string();
            if s.len() > 120 {
                let mut cut = 117;
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                format!("{}…", &s[..cut])
            } else {
                s
            }
        }
    };
    let mut parts = Vec::new();
    for k in keys {
        let (x, y) = (b.get(k), n.get(k));
        if x != y {
            parts.push(format!(
                "--{} was {}, now {}",
                k.replace('_', "-"),
                show(x),
                show(y)
            ));
        }
    }
    if parts.is_empty() {
        "parameters unchanged".into()
    } else {
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn changes_name_the_flag() {
        assert_eq!(
            describe_change(
                &json!({"damping": 0.85, "max_iter": 200}),
                &json!({"damping": 0.9, "max_iter": 200})
            ),
            "--damping was 0.85, now 0.9"
        );
        assert_eq!(
            describe_change(&json!({"a": null}), &json!({"a": "x", "b_c": 1})),
            "--a was unset, now x; --b-c was unset, now 1"
        );
    }
}
