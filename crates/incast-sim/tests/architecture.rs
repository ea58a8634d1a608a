//! The engine's top-level modules depend on each other without cycles:
//! `scenario` composes the modules' configs, `sim` drives them, and nothing
//! below reaches back up. A new `use crate::...` that closes a loop fails here.
//!
//! Two rules of the house style are checked here too: no `.rs` file under
//! `crates/` is longer than 800 lines, and no mechanism module of `tcp`
//! imports from `tcp/config.rs` (the endpoint's composed configuration): a
//! mechanism takes its own config, and only the composers read `TcpConfig`:
//! the endpoint (`tcp/mod.rs`) and the sender it is built from (`tcp/sender/mod.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Top-level module -> the other top-level modules its code names as `crate::m`.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_owned();
        if module == "lib" {
            continue; // the crate root re-exports; it is not a module others depend on
        }
        let deps = graph.entry(module.clone()).or_default();
        for line in fs::read_to_string(&file).unwrap().lines() {
            let code = line.split("//").next().unwrap();
            for (i, _) in code.match_indices("crate::") {
                let rest = &code[i + "crate::".len()..];
                let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if !name.is_empty() && name != module {
                    deps.insert(name);
                }
            }
        }
    }
    graph
}

/// One cycle, as the modules along it.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(m.to_owned(), 1);
        path.push(m.to_owned());
        for n in graph.get(m).into_iter().flatten() {
            match state.get(n.as_str()) {
                Some(1) => {
                    let start = path.iter().position(|p| p == n).unwrap();
                    let mut found = path[start..].to_vec();
                    found.push(n.clone());
                    return Some(found);
                }
                None => {
                    if let Some(found) = visit(n, graph, state, path) {
                        return Some(found);
                    }
                }
                _ => {}
            }
        }
        state.insert(m.to_owned(), 2);
        path.pop();
        None
    }
    let mut state = BTreeMap::new();
    for m in graph.keys() {
        if !state.contains_key(m.as_str()) {
            if let Some(found) = visit(m, graph, &mut state, &mut Vec::new()) {
                return Some(found);
            }
        }
    }
    None
}

#[test]
fn top_level_modules_form_no_cycle() {
    let graph = module_graph();
    assert!(graph.contains_key("scenario") && graph["scenario"].contains("tcp"), "{graph:?}");
    if let Some(found) = cycle(&graph) {
        panic!("module cycle: {}", found.join(" -> "));
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let g = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry((*a).into()).or_default().insert((*b).into());
        }
        g
    };
    assert_eq!(cycle(&g(&[("a", "b"), ("b", "a")])), Some(vec!["a".into(), "b".into(), "a".into()]));
    assert_eq!(cycle(&g(&[("a", "b"), ("b", "c")])), None);
}

/// The longest a source file may be (house style: "Nothing over 800 lines").
const MAX_LINES: usize = 800;

/// Every `.rs` file under `dir`, build output and hidden directories left out.
fn workspace_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                workspace_sources(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// `(file, lines)` for each of `files` longer than [`MAX_LINES`], named
/// relative to `root`, longest first.
fn oversized(root: &Path, files: &[PathBuf]) -> Vec<(String, usize)> {
    let mut over: Vec<(String, usize)> = files
        .iter()
        .map(|f| (f.strip_prefix(root).unwrap().display().to_string(), fs::read_to_string(f).unwrap().lines().count()))
        .filter(|(_, lines)| *lines > MAX_LINES)
        .collect();
    over.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    over
}

#[test]
fn no_source_file_under_crates_exceeds_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    workspace_sources(&root.join("crates"), &mut files);
    assert!(files.len() > 50, "found only {} sources under {}", files.len(), root.display());
    let over = oversized(&root, &files);
    let listed: Vec<String> = over.iter().map(|(f, n)| format!("{f}: {n} lines")).collect();
    assert!(over.is_empty(), "files above {MAX_LINES} lines:\n{}", listed.join("\n"));
}

/// The paths a `use` tree names, each with the name it binds:
/// `a::{b, c::{d as e}}` gives `(a::b, b)` and `(a::c::d, e)`.
fn flatten(tree: &str) -> Vec<(String, String)> {
    fn split_top(list: &str) -> Vec<&str> {
        let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
        for (i, c) in list.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&list[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&list[start..]);
        parts.into_iter().map(str::trim).filter(|p| !p.is_empty()).collect()
    }
    fn walk(prefix: &str, tree: &str, out: &mut Vec<(String, String)>) {
        if let Some(open) = tree.find('{') {
            let inner = &tree[open + 1..tree.rfind('}').unwrap()];
            for part in split_top(inner) {
                walk(&format!("{prefix}{}", &tree[..open]), part, out);
            }
        } else {
            let (path, alias) = tree.split_once(" as ").unwrap_or((tree, ""));
            let path = format!("{prefix}{}", path.trim());
            let bound = if alias.is_empty() { path.rsplit("::").next().unwrap() } else { alias.trim() };
            out.push((path.clone(), bound.to_owned()));
        }
    }
    let words: Vec<&str> = tree.split_whitespace().collect();
    let mut tree = words.join(" ");
    for sep in ["::", "{", "}", ","] {
        tree = tree.replace(&format!(" {sep}"), sep).replace(&format!("{sep} "), sep);
    }
    let mut out = Vec::new();
    walk("", &tree, &mut out);
    out
}

/// Every `use` statement of `text`: its first line (from 1), whether it is
/// indented (inside a function or an inline module), and its tree.
fn use_statements(text: &str) -> Vec<(usize, bool, String)> {
    /// The tree after `use` if `code` starts a `use` (or `pub use`, `pub(crate) use`) statement.
    fn tree_start(code: &str) -> Option<&str> {
        let trimmed = code.trim_start();
        let rest = match trimmed.strip_prefix("pub") {
            Some(r) if r.starts_with('(') => r.split_once(')')?.1.trim_start(),
            Some(r) if r.starts_with(' ') => r.trim_start(),
            _ => trimmed,
        };
        rest.strip_prefix("use ")
    }
    let mut found = Vec::new();
    let mut open: Option<(usize, bool, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap();
        match open.as_mut() {
            Some((_, _, tree)) => {
                tree.push(' ');
                tree.push_str(code);
            }
            None => match tree_start(code) {
                Some(tree) => open = Some((i + 1, code.starts_with(char::is_whitespace), tree.to_owned())),
                None => continue,
            },
        }
        if let Some((line, indented, tree)) = open.take_if(|(_, _, tree)| tree.contains(';')) {
            found.push((line, indented, tree.split(';').next().unwrap().trim().to_owned()));
        }
    }
    found
}

/// The names `tcp/mod.rs` re-exports from `tcp/config.rs` (`pub use config::{...}`).
fn config_reexports(tcp_mod: &str) -> BTreeSet<String> {
    use_statements(tcp_mod)
        .into_iter()
        .flat_map(|(_, _, tree)| flatten(&tree))
        .filter(|(path, _)| path.starts_with("config::"))
        .map(|(_, bound)| bound)
        .collect()
}

/// Whether `path`, imported by a file `depth` modules below `tcp` (`tcp/x.rs`
/// and `tcp/x/mod.rs`: 1), names `tcp::config` or one of `reexported`.
fn names_config(path: &str, depth: usize, indented: bool, reexported: &BTreeSet<String>) -> bool {
    let segments: Vec<&str> = path.split("::").collect();
    let supers = segments.iter().take_while(|s| **s == "super").count();
    let in_tcp: &[&str] = match segments[0] {
        "crate" if segments.get(1) == Some(&"tcp") => &segments[2..],
        // The crate root: only a re-export of config's names could be meant.
        "crate" => return segments.len() == 2 && reexported.contains(segments[1]),
        // `super` climbs to `tcp` from the file's module, or from an inline module in it.
        "super" if supers == depth || (indented && supers == depth + 1) => &segments[supers..],
        _ => return false,
    };
    match in_tcp {
        ["config", ..] => true,
        [name] => reexported.contains(*name),
        _ => false,
    }
}

/// `(file:line, names)` for every `use` under `tcp/` that imports from
/// `tcp/config.rs`, but in `tcp/config.rs` itself and the composers.
fn config_imports(tcp: &Path) -> Vec<(String, Vec<String>)> {
    let reexported = config_reexports(&fs::read_to_string(tcp.join("mod.rs")).unwrap());
    assert!(reexported.contains("TcpConfig"), "tcp/mod.rs re-exports from config: {reexported:?}");
    let mut files = Vec::new();
    sources(tcp, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(tcp).unwrap();
        if [Path::new("mod.rs"), Path::new("config.rs"), Path::new("sender/mod.rs")].contains(&rel) {
            continue;
        }
        let depth = rel.components().count() - usize::from(rel.ends_with("mod.rs"));
        for (line, indented, tree) in use_statements(&fs::read_to_string(&file).unwrap()) {
            let names: Vec<String> = flatten(&tree)
                .into_iter()
                .filter(|(path, _)| names_config(path, depth, indented, &reexported))
                .map(|(path, _)| path.rsplit("::").next().unwrap().to_owned())
                .collect();
            if !names.is_empty() {
                found.push((format!("tcp/{}:{line}", rel.display()), names));
            }
        }
    }
    found
}

#[test]
fn no_tcp_mechanism_imports_from_tcp_config() {
    let found = config_imports(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tcp"));
    let listed: Vec<String> = found.iter().map(|(at, names)| format!("{at}: {}", names.join(", "))).collect();
    assert!(found.is_empty(), "mechanism modules importing from tcp/config.rs:\n{}", listed.join("\n"));
}

#[test]
fn the_line_and_import_checks_find_what_they_look_for() {
    let tree = "super::{flags, cc::{Algorithm, reno::CaIncrease as Inc}, TcpConfig}";
    let flat: Vec<(String, String)> = flatten(tree);
    let expect =
        [("super::flags", "flags"), ("super::cc::Algorithm", "Algorithm"), ("super::cc::reno::CaIncrease", "Inc")];
    assert_eq!(flat[..3], expect.map(|(p, b)| (p.to_owned(), b.to_owned())));
    assert_eq!(flat[3], ("super::TcpConfig".to_owned(), "TcpConfig".to_owned()));

    let text =
        "use super::clock::TcpClock; // a comment\n    use super::{\n        GipPattern,\n        Segment,\n    };\n";
    let statements = use_statements(text);
    assert_eq!(statements.len(), 2);
    assert_eq!((statements[0].0, statements[0].1), (1, false));
    assert_eq!((statements[1].0, statements[1].1), (2, true));
    assert_eq!(flatten(&statements[1].2).len(), 2);

    let reexported =
        config_reexports("pub use cc::SsthreshRule;\npub use config::{GipPattern, TcpConfig as Config};\n");
    assert_eq!(reexported, BTreeSet::from(["Config".to_owned(), "GipPattern".to_owned()]));
    let hits = |path: &str, depth: usize, indented: bool| names_config(path, depth, indented, &reexported);
    // tcp/gip.rs (depth 1) and tcp/cc/window.rs (depth 2) reaching up to tcp.
    assert!(hits("super::GipPattern", 1, false) && hits("super::super::Config", 2, false));
    assert!(hits("super::config::TcpVariant", 1, false) && hits("crate::tcp::config::SpuriousRto", 2, false));
    assert!(hits("crate::tcp::GipPattern", 1, false) && hits("super::super::GipPattern", 1, true));
    // Not config: a sibling, a name from elsewhere, `super` stopping below tcp, a glob.
    assert!(!hits("super::rto::RtoConfig", 1, false) && !hits("super::RtoConfig", 1, false));
    assert!(!hits("super::GipPattern", 2, false) && !hits("super::config::X", 2, false));
    assert!(!hits("super::*", 1, false) && !hits("std::fmt::Debug", 1, false));

    let dir = std::env::temp_dir().join(format!("incast-architecture-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let (long, short) = (dir.join("long.rs"), dir.join("short.rs"));
    fs::write(&long, "//\n".repeat(MAX_LINES + 1)).unwrap();
    fs::write(&short, "//\n".repeat(MAX_LINES)).unwrap();
    let over = oversized(&dir, &[long, short]);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(over, vec![("long.rs".to_owned(), MAX_LINES + 1)]);
}
