//! The layering of `src/`, checked: every `use crate::…` and every `crate::…`,
//! `super::…` or `self::…` path in the library's non-test code is read, and an
//! import against the layer table in `ARCHITECTURE.md` ("Layers"), or a cycle
//! between the modules of one top-level module, fails the suite — the way
//! ArchUnit's layered architectures or cargo-deny's bans keep a rule true
//! once it is written down.
//!
//! The table lists the top-level modules from the top down, row by row and
//! left to right within a row; a module may import only modules listed after
//! it. Every top-level module must be in it once, so a new one is placed on
//! purpose. Test code (`#[cfg(test)]` items and the files of test modules) is
//! not checked: tests may reach across layers to build their inputs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[path = "common/tarjan.rs"]
mod tarjan;

/// A token of Rust source, as far as imports need: identifiers, `::` and
/// single punctuation; comments, strings and characters are dropped.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Path,
    Punct(char),
}

/// Tokens with their line numbers.
fn lex(src: &str) -> Vec<(Tok, usize)> {
    let b = src.as_bytes();
    let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
    let count_lines = |from: usize, to: usize| b[from..to].iter().filter(|&&c| c == b'\n').count();
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            line += count_lines(start, i);
        } else if let Some(end) = raw_string_end(b, i) {
            i = end;
            line += count_lines(start, i);
        } else if c == b'"' || (c == b'b' && b.get(i + 1) == Some(&b'"')) {
            i += if c == b'b' { 2 } else { 1 };
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            line += count_lines(start, i.min(b.len()));
        } else if c == b'\'' || (c == b'b' && b.get(i + 1) == Some(&b'\'')) {
            // A character literal, or a lifetime (`'a` not closed by `'`).
            let j = if c == b'b' { i + 2 } else { i + 1 };
            if b.get(j) == Some(&b'\\') {
                i = j + 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            } else {
                let ch = src[j..].chars().next().map_or(1, char::len_utf8);
                if b.get(j + ch) == Some(&b'\'') {
                    i = j + ch + 1;
                } else {
                    i = j;
                }
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Ident(src[start..i].to_string()), line));
        } else if b[i..].starts_with(b"::") {
            out.push((Tok::Path, line));
            i += 2;
        } else {
            let ch = src[i..].chars().next().unwrap_or(' ');
            out.push((Tok::Punct(ch), line));
            i += ch.len_utf8();
        }
    }
    out
}

/// The end of a raw string literal starting at `i` (`r"…"`, `r#"…"#`, `br#…`).
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    if b.get(j) == Some(&b'b') {
        j += 1;
    }
    if b.get(j) != Some(&b'r') || (i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
    {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    let close: Vec<u8> = std::iter::once(b'"')
        .chain(std::iter::repeat_n(b'#', hashes))
        .collect();
    while j < b.len() {
        if b[j..].starts_with(&close) {
            return Some(j + close.len());
        }
        j += 1;
    }
    Some(b.len())
}

/// Drops items under `#[cfg(test)]` (or `#[cfg(doc)]`); returns the kept
/// tokens and the names of test modules declared as files (`mod tests;`).
fn strip_test_items(toks: Vec<(Tok, usize)>) -> (Vec<(Tok, usize)>, Vec<String>) {
    let (mut kept, mut test_mods) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < toks.len() {
        if let Some(after) = test_attr(&toks, i) {
            // Skip further attributes, then the item: to its `;` or its body.
            let mut j = after;
            while let Some(end) = attr_end(&toks, j) {
                j = end;
            }
            if toks.get(j).map(|t| &t.0) == Some(&Tok::Ident("mod".into())) {
                if let (Some((Tok::Ident(name), _)), Some((Tok::Punct(';'), _))) =
                    (toks.get(j + 1), toks.get(j + 2))
                {
                    test_mods.push(name.clone());
                }
            }
            let mut depth = 0i32;
            while j < toks.len() {
                match toks[j].0 {
                    Tok::Punct('{') | Tok::Punct('(') | Tok::Punct('[') => depth += 1,
                    Tok::Punct('}') | Tok::Punct(')') | Tok::Punct(']') => {
                        depth -= 1;
                        if depth == 0 && toks[j].0 == Tok::Punct('}') {
                            j += 1;
                            break;
                        }
                    }
                    Tok::Punct(';') if depth == 0 => {
                        j += 1;
                        break;
                    }
                    _ => {}
                }
                j += 1;
            }
            i = j;
        } else {
            kept.push(toks[i].clone());
            i += 1;
        }
    }
    (kept, test_mods)
}

/// If an attribute `#[cfg(test)]` or `#[cfg(doc)]` starts at `i`, the index
/// after it.
fn test_attr(toks: &[(Tok, usize)], i: usize) -> Option<usize> {
    let want = |k: usize, t: Tok| toks.get(i + k).map(|x| &x.0) == Some(&t);
    let ident = |k: usize, s: &str| want(k, Tok::Ident(s.into()));
    (want(0, Tok::Punct('#'))
        && want(1, Tok::Punct('['))
        && ident(2, "cfg")
        && want(3, Tok::Punct('('))
        && (ident(4, "test") || ident(4, "doc"))
        && want(5, Tok::Punct(')'))
        && want(6, Tok::Punct(']')))
    .then_some(i + 7)
}

/// If an attribute `#[…]` starts at `i`, the index after it.
fn attr_end(toks: &[(Tok, usize)], i: usize) -> Option<usize> {
    if toks.get(i)?.0 != Tok::Punct('#') || toks.get(i + 1)?.0 != Tok::Punct('[') {
        return None;
    }
    let mut depth = 0;
    for (j, t) in toks.iter().enumerate().skip(i + 1) {
        match t.0 {
            Tok::Punct('[') => depth += 1,
            Tok::Punct(']') => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// A path a file names, starting at `crate`, `super` or `self`, with its line.
#[derive(Clone, Debug, PartialEq)]
struct Named {
    path: Vec<String>,
    line: usize,
}

/// Every path a file names: the leaves of its `use` trees (braces expanded)
/// and every other `crate::a::b`, `super::a` or `self::a` path.
fn named_paths(toks: &[(Tok, usize)]) -> Vec<Named> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if toks[i].0 == Tok::Ident("use".into()) {
            let mut j = i + 1;
            let mut prefix = Vec::new();
            use_tree(toks, &mut j, &mut prefix, &mut out);
            i = j;
            continue;
        }
        if let Tok::Ident(root) = &toks[i].0 {
            let after_path = i > 0 && toks[i - 1].0 == Tok::Path;
            if matches!(root.as_str(), "crate" | "super" | "self")
                && !after_path
                && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Path)
            {
                let mut path = vec![root.clone()];
                let mut j = i + 1;
                while toks.get(j).map(|t| &t.0) == Some(&Tok::Path) {
                    match toks.get(j + 1).map(|t| &t.0) {
                        Some(Tok::Ident(s)) => path.push(s.clone()),
                        _ => break,
                    }
                    j += 2;
                }
                out.push(Named {
                    path,
                    line: toks[i].1,
                });
                i = j;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Reads one use tree at `*j` (after `use` or inside braces), pushing its
/// leaves; stops after the tree (at `,`, `}` or `;`).
fn use_tree(toks: &[(Tok, usize)], j: &mut usize, prefix: &mut Vec<String>, out: &mut Vec<Named>) {
    let depth = prefix.len();
    let line = toks.get(*j).map_or(0, |t| t.1);
    loop {
        match toks.get(*j).map(|t| &t.0) {
            Some(Tok::Ident(s)) if s == "as" => {
                *j += 2;
            }
            Some(Tok::Ident(s)) => {
                prefix.push(s.clone());
                *j += 1;
            }
            Some(Tok::Path) => *j += 1,
            Some(Tok::Punct('*')) => *j += 1,
            Some(Tok::Punct('{')) => {
                *j += 1;
                loop {
                    if toks.get(*j).map(|t| &t.0) == Some(&Tok::Punct('}')) {
                        *j += 1;
                        break;
                    }
                    use_tree(toks, j, prefix, out);
                    match toks.get(*j).map(|t| &t.0) {
                        Some(Tok::Punct(',')) => *j += 1,
                        Some(Tok::Punct('}')) => {
                            *j += 1;
                            break;
                        }
                        _ => break,
                    }
                }
                prefix.truncate(depth);
                if toks.get(*j).map(|t| &t.0) == Some(&Tok::Punct(';')) {
                    *j += 1;
                }
                return;
            }
            _ => {
                if prefix.len() > depth
                    && matches!(
                        prefix.first().map(String::as_str),
                        Some("crate" | "super" | "self")
                    )
                {
                    out.push(Named {
                        path: prefix.clone(),
                        line,
                    });
                }
                prefix.truncate(depth);
                if toks.get(*j).map(|t| &t.0) == Some(&Tok::Punct(';')) {
                    *j += 1;
                }
                return;
            }
        }
    }
}

/// A source file of the crate: its module path (`[]` for `lib.rs`, `["job",
/// "files"]` for `src/job/files.rs` and `["job"]` for `src/job/mod.rs`), its
/// name for messages, and its text.
struct SourceFile {
    module: Vec<String>,
    name: String,
    text: String,
}

/// A module's path: `["job", "files"]`.
type Module = Vec<String>;

/// A broken rule, for the failure message.
#[derive(Debug, PartialEq)]
struct Violation(String);

/// The layer table: every top-level module with its position, top first.
fn parse_layers(architecture: &str) -> Result<Vec<Vec<String>>, String> {
    let start = architecture
        .find("<!-- layers -->")
        .ok_or("ARCHITECTURE.md has no `<!-- layers -->` table")?;
    let end = architecture[start..]
        .find("<!-- /layers -->")
        .ok_or("the layer table is not closed by `<!-- /layers -->`")?;
    let mut rows = Vec::new();
    for line in architecture[start..start + end].lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || cells[1] == "layer" || cells[1].starts_with("---") {
            continue;
        }
        let modules: Vec<String> = cells[2]
            .split(',')
            .map(|m| m.trim().trim_matches('`').to_string())
            .filter(|m| !m.is_empty())
            .collect();
        rows.push(modules);
    }
    if rows.is_empty() {
        return Err("the layer table has no rows".into());
    }
    Ok(rows)
}

/// Checks `files` against `layers`: every top-level module listed once; every
/// import from one top-level module to another goes down the table; no cycle
/// among the modules of a top-level module (a module importing its ancestor,
/// or the reverse, is not counted: a parent declares its children and they
/// use its items).
fn check(files: &[SourceFile], layers: &[Vec<String>]) -> Vec<Violation> {
    let mut bad = Vec::new();
    let order: Vec<&String> = layers.iter().flatten().collect();
    let rank = |m: &str| order.iter().position(|x| *x == m);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let tops: BTreeSet<&String> = modules.iter().filter_map(|m| m.first()).collect();
    for t in &tops {
        if rank(t).is_none() {
            bad.push(Violation(format!(
                "module `{t}` is not in the layer table of ARCHITECTURE.md: place it"
            )));
        }
    }
    for m in &order {
        if order.iter().filter(|x| x == &m).count() > 1 {
            bad.push(Violation(format!("`{m}` is in the layer table twice")));
        }
        if !tops.contains(m) {
            bad.push(Violation(format!(
                "the layer table lists `{m}`, which is not a module of src/"
            )));
        }
    }

    // Test-only files: declared by `#[cfg(test)] mod x;`, and their children.
    let mut test_modules: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut stripped = Vec::new();
    for f in files {
        let (toks, tests) = strip_test_items(lex(&f.text));
        for t in tests {
            let mut m = f.module.clone();
            m.push(t);
            test_modules.insert(m);
        }
        stripped.push(toks);
    }
    let is_test = |m: &[String]| test_modules.iter().any(|t| m.starts_with(t));

    let resolve = |path: &[String]| -> Option<Vec<String>> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|p| modules.contains(p))
    };
    // module → module it imports → where (file, line), for the cycle report.
    let mut edges: BTreeMap<Module, BTreeMap<Module, (String, usize)>> = BTreeMap::new();
    for (f, toks) in files.iter().zip(&stripped) {
        if is_test(&f.module) {
            continue;
        }
        for named in named_paths(toks) {
            // `super` is the parent of this file's module; `self` the module.
            let mut base: Vec<String> = f.module.clone();
            let mut rest = &named.path[..];
            match rest[0].as_str() {
                "crate" => {
                    base.clear();
                    rest = &rest[1..];
                }
                "self" => rest = &rest[1..],
                _ => {
                    while rest.first().map(String::as_str) == Some("super") {
                        base.pop();
                        rest = &rest[1..];
                    }
                }
            }
            let mut full = base;
            full.extend(rest.iter().cloned());
            let Some(target) = resolve(&full) else {
                continue;
            };
            let (from_top, to_top) = (&f.module[0], &target[0]);
            if from_top != to_top {
                if let (Some(a), Some(b)) = (rank(from_top), rank(to_top)) {
                    if b < a {
                        bad.push(Violation(format!(
                            "{}:{}: `{from_top}` imports `{}`, but `{to_top}` is above `{from_top}` in the layer table",
                            f.name,
                            named.line,
                            full.join("::"),
                        )));
                    }
                }
            } else if !target.starts_with(&f.module) && !f.module.starts_with(&target) {
                edges
                    .entry(f.module.clone())
                    .or_default()
                    .entry(target)
                    .or_insert((f.name.clone(), named.line));
            }
        }
    }

    // Cycles among the modules inside each top-level module.
    let nodes: Vec<&Vec<String>> = modules.iter().collect();
    let index = |m: &Vec<String>| nodes.iter().position(|x| *x == m).unwrap_or(0);
    let adj: Vec<Vec<usize>> = nodes
        .iter()
        .map(|m| {
            edges
                .get(*m)
                .map(|t| t.keys().map(index).collect())
                .unwrap_or_default()
        })
        .collect();
    let comp = tarjan::tarjan(nodes.len(), &adj);
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (v, c) in comp.iter().enumerate() {
        groups.entry(*c).or_default().push(v);
    }
    for members in groups.values().filter(|g| g.len() > 1) {
        let mut lines = Vec::new();
        for &v in members {
            for (t, (file, line)) in edges.get(nodes[v]).into_iter().flatten() {
                if members.contains(&index(t)) {
                    lines.push(format!("{file}:{line} imports `{}`", t.join("::")));
                }
            }
        }
        let names: Vec<String> = members.iter().map(|&v| nodes[v].join("::")).collect();
        bad.push(Violation(format!(
            "import cycle between {}: {}",
            names.join(", "),
            lines.join("; ")
        )));
    }
    bad
}

/// The crate's source files under `src/`.
fn read_sources(src: &Path) -> Vec<SourceFile> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("under src");
            let mut module: Vec<String> = rel
                .with_extension("")
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            out.push(SourceFile {
                module,
                name: format!("src/{}", rel.display()),
                text: std::fs::read_to_string(&path).expect("a source file"),
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[test]
fn imports_follow_the_layer_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let arch = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let layers = parse_layers(&arch).unwrap_or_else(|e| panic!("{e}"));
    let files = read_sources(&root.join("src"));
    assert!(files.len() > 50, "read only {} files", files.len());
    let bad = check(&files, &layers);
    let text: Vec<String> = bad.into_iter().map(|v| v.0).collect();
    assert!(text.is_empty(), "{}", text.join("\n"));
}

/// A synthetic crate for the checker's own tests.
fn synthetic(files: &[(&str, &str)]) -> Vec<SourceFile> {
    files
        .iter()
        .map(|(name, text)| {
            let mut module: Vec<String> = name
                .trim_end_matches(".rs")
                .split('/')
                .map(str::to_string)
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            SourceFile {
                module,
                name: format!("src/{name}"),
                text: text.to_string(),
            }
        })
        .collect()
}

const TABLE: &str = "
<!-- layers -->
| layer | modules | what |
|---|---|---|
| stages | `dedup`, `ingest` | the stages |
| jobs | `job` | the stage layer |
| base | `error` | errors |
<!-- /layers -->
";

fn clean_crate() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "lib.rs",
            "pub mod dedup; pub mod ingest; pub mod job; pub mod error;",
        ),
        ("error.rs", "pub struct Error;"),
        ("job/mod.rs", "pub mod files;\nuse crate::error::Error;"),
        (
            "job/files.rs",
            "use super::super::error::Error; pub enum JobFile {}",
        ),
        (
            "dedup/mod.rs",
            "pub mod stage; pub mod sketch;\nuse crate::{job::files::JobFile, ingest::Rec};",
        ),
        (
            "dedup/stage.rs",
            "use super::sketch::Sketch; use crate::error::Error;",
        ),
        (
            "dedup/sketch.rs",
            "pub struct Sketch; fn f() { let s = \"crate::job::x\"; /* super::stage */ }",
        ),
        (
            "ingest/mod.rs",
            "pub struct Rec; use crate::job::JobFile as F;",
        ),
    ]
}

#[test]
fn the_checker_passes_a_layered_crate() {
    let layers = parse_layers(TABLE).unwrap();
    assert_eq!(
        layers,
        [vec!["dedup", "ingest"], vec!["job"], vec!["error"]]
    );
    assert_eq!(check(&synthetic(&clean_crate()), &layers), []);
}

#[test]
fn the_checker_fails_an_import_up_the_table() {
    let layers = parse_layers(TABLE).unwrap();
    let mut files = clean_crate();
    files[3] = (
        "job/files.rs",
        "use crate::error::Error;\nuse crate::{\n    dedup::stage::{Alg, Verify as V},\n};",
    );
    let bad = check(&synthetic(&files), &layers);
    assert_eq!(bad.len(), 2, "{bad:?}");
    for (v, item) in bad.iter().zip(["Alg", "Verify"]) {
        assert_eq!(
            v.0,
            format!("src/job/files.rs:3: `job` imports `dedup::stage::{item}`, but `dedup` is above `job` in the layer table")
        );
    }
    // Within a row, right to left is up: `ingest` may not import `dedup`.
    let mut files = clean_crate();
    files[7] = ("ingest/mod.rs", "fn f() { crate::dedup::stage::run(); }");
    let bad = check(&synthetic(&files), &layers);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(
        bad[0].0.contains("`ingest` imports `dedup::stage::run`"),
        "{bad:?}"
    );
}

#[test]
fn the_checker_fails_a_cycle_inside_a_module() {
    let layers = parse_layers(TABLE).unwrap();
    let mut files = clean_crate();
    files[6] = ("dedup/sketch.rs", "use super::stage::Options;");
    let bad = check(&synthetic(&files), &layers);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(
        bad[0]
            .0
            .starts_with("import cycle between dedup::sketch, dedup::stage"),
        "{bad:?}"
    );
}

#[test]
fn the_checker_ignores_test_code_and_wants_every_module_placed() {
    let layers = parse_layers(TABLE).unwrap();
    let mut files = clean_crate();
    files[2] = (
        "job/mod.rs",
        "pub mod files;\n#[cfg(test)]\n#[allow(unused)]\nmod more;",
    );
    files[3] = (
        "job/files.rs",
        "#[cfg(test)]\nmod tests {\n    use crate::dedup::stage::X;\n    fn f() {}\n}\nfn g() {}",
    );
    files.push(("job/more.rs", "use crate::dedup::stage::Y;"));
    files.push(("job/more/deep.rs", "fn f() { crate::ingest::g() }"));
    assert_eq!(check(&synthetic(&files), &layers), []);
    files.push(("search.rs", "use crate::job::JobFile;"));
    let bad = check(&synthetic(&files), &layers);
    assert_eq!(
        bad,
        [Violation(
            "module `search` is not in the layer table of ARCHITECTURE.md: place it".into()
        )]
    );
}
