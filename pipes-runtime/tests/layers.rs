//! The runtime's files import only downwards: each file names (as `crate::module`) only files
//! of its own layer or the layers below, and no files import each other in a circle. The
//! layers are those of the implementation notes in `lib.rs`; a new file must be placed in one
//! here.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The layers, lowest first.
const LAYERS: &[&[&str]] = &[
    &[
        "wait",
        "waiter",
        "ready_list",
        "spin",
        "sync",
        "take",
        "error",
        "panics",
    ],
    &["packet", "lane", "mpsc", "queue", "alloc", "drop_queue"],
    &[
        "stream", "oneshot", "shared", "buffer", "duplex", "state", "endpoint", "target", "room",
    ],
    &["select", "port_set", "arm"],
];

/// The `crate::module` names a file's code (not its comments, not its tests) uses.
fn imports(source: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let code = source
        .split("\n#[cfg(test)]")
        .next()
        .unwrap_or(source)
        .split("\n#[cfg(all(test")
        .next()
        .unwrap_or(source);
    let mut found = BTreeSet::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
        for (at, _) in line.match_indices("crate::") {
            let name: String = line[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if modules.contains(&name) {
                found.insert(name);
            }
        }
    }
    found
}

#[test]
#[cfg_attr(
    miri,
    ignore = "reads the source files, which Miri's isolation forbids"
)]
fn runtime_files_import_only_their_own_layer_or_below_and_form_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = BTreeMap::new();
    for entry in fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        if path.extension().is_some_and(|e| e == "rs") && name != "lib" {
            sources.insert(name, fs::read_to_string(&path).unwrap());
        }
    }
    let modules: BTreeSet<String> = sources.keys().cloned().collect();
    let layer_of = |name: &str| LAYERS.iter().position(|layer| layer.contains(&name));
    for name in &modules {
        assert!(
            layer_of(name).is_some(),
            "src/{name}.rs is in no layer: add it to LAYERS (and to lib.rs's notes)"
        );
    }
    let graph: BTreeMap<&str, BTreeSet<String>> = sources
        .iter()
        .map(|(name, source)| {
            let mut used = imports(source, &modules);
            used.remove(name);
            (name.as_str(), used)
        })
        .collect();
    for (name, used) in &graph {
        for other in used {
            assert!(
                layer_of(other) <= layer_of(name),
                "src/{name}.rs imports src/{other}.rs, a layer above it"
            );
        }
    }
    // No circle within a layer either: depth-first search for a back edge.
    fn visit<'a>(
        name: &'a str,
        graph: &'a BTreeMap<&str, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if done.contains(name) {
            return;
        }
        assert!(
            !path.contains(&name),
            "files import each other in a circle: {} -> {name}",
            path.join(" -> ")
        );
        path.push(name);
        for other in &graph[name] {
            visit(other, graph, path, done);
        }
        path.pop();
        done.insert(name);
    }
    let mut done = BTreeSet::new();
    for name in graph.keys() {
        visit(name, &graph, &mut Vec::new(), &mut done);
    }
}
