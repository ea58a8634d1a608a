//! The engine's top-level modules depend on each other without cycles:
//! `scenario` composes the modules' configs, `sim` drives them, and nothing
//! below reaches back up. A new `use crate::...` that closes a loop fails here.

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
