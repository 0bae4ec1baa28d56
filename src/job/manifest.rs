//! The job manifest, `job.json`: per stage, its published result (parameters,
//! the checksums of the inputs it read, its outputs, its figures) and the
//! attempt under way, if any; the generation its published state is at;
//! and a checksum of its own bytes. Specified in `formats/job-manifest.md`.

use std::collections::BTreeMap;
use std::path::Path;

/// The checksum recorded for an optional input the job did not hold
/// ([`super::Stage::optional_inputs`]).
pub const ABSENT: &str = "";

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::files::{JobFile, StageId};

/// Version of the manifest layout.
pub const MANIFEST_VERSION: u32 = 3;
/// The previous layout (no generation, no checksum), still read.
pub const MANIFEST_VERSION_2: u32 = 2;
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
    /// Counts the changes of the published state: raised by every
    /// publication before any published file is replaced or removed. A
    /// reader that opened its files between two readings of the same
    /// generation (without a `moving` mark) holds that generation, whole.
    #[serde(default)]
    pub generation: u64,
    /// Stages by name.
    pub stages: BTreeMap<String, StageRecord>,
}

/// What precedes the checksum's 8 hex digits at the end of `job.json`.
const CHECKSUM_OPEN: &[u8] = b",\n  \"checksum\": \"";
/// What follows them: the end of the top-level object.
const CHECKSUM_CLOSE: &[u8] = b"\"\n}";

/// Why the bytes of a `job.json` cannot be trusted.
#[derive(Debug, PartialEq, Eq)]
pub enum ManifestFault {
    /// Not JSON of the manifest's shape (the serde error).
    Malformed(String),
    /// A version this build does not read.
    Version(u32),
    /// A version-3 file without its checksum line.
    NoChecksum,
    /// The stored checksum differs from the bytes' (edited or damaged).
    Checksum {
        /// Byte offset of the checksum line.
        offset: u64,
        /// The stored crc32c.
        stored: u32,
        /// The crc32c of the bytes before it.
        computed: u32,
    },
}

impl ManifestFault {
    /// The library error for this fault in the manifest at `path`.
    pub fn at(self, path: &Path) -> crate::Error {
        match self {
            ManifestFault::Malformed(why) => crate::Error::corrupt(path, "manifest", 0, why),
            ManifestFault::Version(found) => crate::Error::Version {
                path: path.to_path_buf(),
                what: "job manifest".into(),
                expected: MANIFEST_VERSION,
                found,
            },
            ManifestFault::NoChecksum => crate::Error::corrupt(
                path,
                "manifest",
                0,
                "the checksum line that ends a version-3 manifest is missing (the file was edited or cut); webmill never writes it so",
            ),
            ManifestFault::Checksum {
                offset,
                stored,
                computed,
            } => crate::Error::Checksum {
                path: path.to_path_buf(),
                region: "manifest (job.json was edited by hand or damaged; its records can no longer be trusted)".into(),
                offset,
                expected: stored,
                found: computed,
            },
        }
    }
}

impl Manifest {
    /// The bytes of `job.json`: the manifest as pretty JSON whose last key,
    /// `checksum`, holds the crc32c (8 lowercase hex digits) of every byte
    /// before its line.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        // A struct always serializes as an object ending "\n}".
        bytes.truncate(bytes.len().saturating_sub(2));
        let crc = crc32c::crc32c(&bytes);
        bytes.extend_from_slice(CHECKSUM_OPEN);
        bytes.extend_from_slice(format!("{crc:08x}").as_bytes());
        bytes.extend_from_slice(CHECKSUM_CLOSE);
        bytes
    }

    /// Reads the bytes of a `job.json`, checking its version and checksum
    /// (version 2, which had none, is read as generation 0).
    pub fn from_bytes(bytes: &[u8]) -> Result<Manifest, ManifestFault> {
        #[derive(Deserialize)]
        struct VersionOnly {
            version: u32,
        }
        let v: VersionOnly =
            serde_json::from_slice(bytes).map_err(|e| ManifestFault::Malformed(e.to_string()))?;
        match v.version {
            MANIFEST_VERSION_2 => {}
            MANIFEST_VERSION => {
                let tail = CHECKSUM_OPEN.len() + 8 + CHECKSUM_CLOSE.len();
                let Some(cut) = bytes.len().checked_sub(tail) else {
                    return Err(ManifestFault::NoChecksum);
                };
                let (body, line) = bytes.split_at(cut);
                let digits = line
                    .strip_prefix(CHECKSUM_OPEN)
                    .and_then(|l| l.strip_suffix(CHECKSUM_CLOSE))
                    .and_then(|d| std::str::from_utf8(d).ok())
                    .filter(|d| {
                        d.bytes()
                            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
                    })
                    .and_then(|d| u32::from_str_radix(d, 16).ok())
                    .ok_or(ManifestFault::NoChecksum)?;
                let computed = crc32c::crc32c(body);
                if computed != digits {
                    return Err(ManifestFault::Checksum {
                        offset: cut as u64 + 2,
                        stored: digits,
                        computed,
                    });
                }
            }
            other => return Err(ManifestFault::Version(other)),
        }
        serde_json::from_slice(bytes).map_err(|e| ManifestFault::Malformed(e.to_string()))
    }
}

impl Manifest {
    /// An empty manifest.
    pub fn new() -> Manifest {
        Manifest {
            version: MANIFEST_VERSION,
            generation: 0,
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
        // Lists of inputs: each by its paths and names, not as JSON.
        Some(Value::Array(items)) => {
            let s = items
                .iter()
                .map(describe_item)
                .collect::<Vec<_>>()
                .join(" ");
            if s.len() > 240 {
                let mut cut = 237;
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                format!("{}…", &s[..cut])
            } else {
                s
            }
        }
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
            // Inputs are positional arguments, the other parameters flags.
            let (name, verb) = if k == "inputs" {
                ("the inputs".to_string(), "were")
            } else {
                (format!("--{}", k.replace('_', "-")), "was")
            };
            parts.push(format!("{name} {verb} {}, now {}", show(x), show(y)));
        }
    }
    if parts.is_empty() {
        "parameters unchanged".into()
    } else {
        parts.join("; ")
    }
}

/// One input of a stage's parameters as a person gave it: a string as is;
/// an object (`{"warc": path, "bytes": n}`, `{"dir": d, "base": url}`) by
/// its text fields (`URL=DIR` for a directory with its base URL).
fn describe_item(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(m) => match (m.get("base"), m.get("dir")) {
            (Some(Value::String(b)), Some(Value::String(d))) => format!("{b}={d}"),
            _ => m
                .values()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
        },
        v => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_checksum_covers_every_byte_before_it() {
        let mut m = Manifest::new();
        m.generation = 7;
        m.stages.insert(
            "pagerank".into(),
            StageRecord {
                running: Some(Attempt {
                    params: json!({"damping": 0.85}),
                    inputs: BTreeMap::new(),
                    started: 1,
                    attempts: 1,
                }),
                ..StageRecord::default()
            },
        );
        let bytes = m.to_bytes();
        assert!(bytes.ends_with(b"\"\n}"));
        let back = Manifest::from_bytes(&bytes).unwrap();
        assert_eq!(back.generation, 7);
        assert_eq!(back.stages, m.stages);
        // Any byte before the checksum line changed is caught, naming where.
        let text = String::from_utf8(bytes.clone()).unwrap();
        let edited = text.replace("0.85", "0.95");
        match Manifest::from_bytes(edited.as_bytes()) {
            Err(ManifestFault::Checksum { offset, .. }) => {
                assert_eq!(
                    &edited.as_bytes()[offset as usize..][..12],
                    b"  \"checksum\""
                )
            }
            other => panic!("{other:?}"),
        }
        // Without the line, a version-3 file is refused; version 2 is read.
        let cut = &bytes[..bytes.len() - 28];
        let mut no_sum = cut.to_vec();
        no_sum.extend_from_slice(b"\n}");
        assert_eq!(
            Manifest::from_bytes(&no_sum).unwrap_err(),
            ManifestFault::NoChecksum
        );
        let v2 = String::from_utf8(no_sum)
            .unwrap()
            .replace("\"version\": 3", "\"version\": 2");
        assert_eq!(Manifest::from_bytes(v2.as_bytes()).unwrap().generation, 7);
        assert_eq!(
            Manifest::from_bytes(br#"{"version": 1, "stages": {}}"#).unwrap_err(),
            ManifestFault::Version(1)
        );
    }

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
        // Inputs are named as given, never as JSON.
        assert_eq!(
            describe_change(
                &json!({"inputs": [{"base": "file:///w/", "dir": "/w"}]}),
                &json!({"inputs": [{"bytes": 12905, "warc": "/w/a.warc.gz"}, {"bytes": 1, "warc": "/w/b.warc.gz"}]})
            ),
            "the inputs were file:///w/=/w, now /w/a.warc.gz /w/b.warc.gz"
        );
    }
}
