//! House rules that would otherwise live only in review (ARCHITECTURE.md, "Invariants").

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn offenders(dir: &str, banned: &[&str], skip: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut bad = Vec::new();
    for f in files {
        if skip.iter().any(|s| f.ends_with(s)) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for b in banned {
                if code.contains(b) {
                    bad.push(format!("{}:{}: {b}", f.display(), i + 1));
                }
            }
        }
    }
    bad
}

#[test]
fn the_production_side_knows_nothing_of_the_simulator_clock_threads_or_files() {
    let banned = [
        "lws_sim",
        "std::time",
        "std::thread",
        "std::fs",
        "rand",
        "tokio",
        "Instant::now",
        "SystemTime",
    ];
    let bad = offenders("../src", &banned, &[]);
    assert!(
        bad.is_empty(),
        "src/ must stay sans-IO:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_simulator_uses_no_wall_clock_threads_or_unordered_maps() {
    // Only the CLI touches the wall clock; ordered containers keep runs deterministic.
    let banned = [
        "HashMap",
        "HashSet",
        "Instant::now",
        "SystemTime",
        "std::thread",
        "thread_rng",
    ];
    // `serve` is a network front on the deterministic core: its clock, thread and socket files
    // are the other exceptions; `lookup.rs` wraps a hash map that offers no iteration.
    let bad = offenders(
        "src",
        &banned,
        &[
            "main.rs",
            "serve/mod.rs",
            "serve/clock.rs",
            "serve/http.rs",
            "lookup.rs",
        ],
    );
    assert!(
        bad.is_empty(),
        "sim/ must stay deterministic:\n{}",
        bad.join("\n")
    );
}

/// The module a `crate::` path names: the longest prefix of it that is a file of `sim/src`.
fn module_of(path: &[&str], modules: &std::collections::BTreeSet<String>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| modules.contains(m))
}

/// Expand a `use` tree (`a::{b, c::{d, e}}`, whitespace removed) into its paths.
fn expand_use(tree: &str) -> Vec<String> {
    let Some(open) = tree.find('{') else {
        return vec![tree.to_string()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand_use(&format!("{prefix}{p}")))
        .collect()
}

/// The paths `code` names after `root` (`crate::` or `super::`): each `use ROOT...;`
/// statement, groups expanded, over as many lines as it takes, and each `ROOT x::y` in
/// expressions and types.
fn paths_after(code: &str, root: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for stmt in code.split(&format!("use {root}")).skip(1) {
        let tree: String = stmt
            .split(';')
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        paths.extend(expand_use(&tree));
    }
    for rest in code.split(root).skip(1) {
        let path: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        paths.push(path);
    }
    paths
}

/// Which modules of the crate under `root` (`sim/src`, `src`) each file imports through
/// `crate::` paths (file level; a folder's `mod.rs` is the folder's module; `lib.rs` and
/// `main.rs` are roots, not modules).
fn import_graph(
    root: &Path,
) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    let root = root.to_path_buf();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut by_module = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        if parts == ["lib"] || parts == ["main"] {
            continue;
        }
        by_module.insert(parts.join("::"), f.clone());
    }
    let modules: BTreeSet<String> = by_module.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (module, file) in &by_module {
        let code: String = std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let paths = paths_after(&code, "crate::");
        // `super::sibling`: a module of the same folder. A child's use of its own parent (the
        // folder's `mod.rs`) is the folder's plumbing, not an edge between files.
        let parent: Vec<&str> = module.split("::").collect();
        let parent = &parent[..parent.len() - 1];
        let siblings = paths_after(&code, "super::");
        let parent_module = parent.join("::");
        let sibling_deps = siblings.iter().filter_map(|p| {
            let mut segs: Vec<&str> = parent.to_vec();
            segs.extend(p.split("::").filter(|s| !s.is_empty()));
            module_of(&segs, &modules).filter(|m| *m != parent_module)
        });
        let deps: BTreeSet<String> = paths
            .iter()
            .filter_map(|p| {
                let segs: Vec<&str> = p.split("::").filter(|s| !s.is_empty()).collect();
                module_of(&segs, &modules)
            })
            .chain(sibling_deps)
            .filter(|m| m != module)
            .collect();
        graph.insert(module.clone(), deps);
    }
    graph
}

/// A cycle of the graph, as the list of modules along it, if there is one.
fn find_cycle(
    graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Option<Vec<String>> {
    // Colours: absent = unvisited, false = on the stack, true = done.
    fn visit(
        m: &str,
        graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        colour: &mut std::collections::BTreeMap<String, bool>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        colour.insert(m.to_string(), false);
        stack.push(m.to_string());
        for d in graph.get(m).into_iter().flatten() {
            match colour.get(d) {
                Some(false) => {
                    let at = stack.iter().position(|s| s == d).unwrap();
                    let mut cycle = stack[at..].to_vec();
                    cycle.push(d.clone());
                    return Some(cycle);
                }
                Some(true) => {}
                None => {
                    if let Some(c) = visit(d, graph, colour, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        colour.insert(m.to_string(), true);
        None
    }
    let mut colour = std::collections::BTreeMap::new();
    for m in graph.keys() {
        if !colour.contains_key(m) {
            if let Some(c) = visit(m, graph, &mut colour, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_import_graph_finds_known_shapes() {
    assert_eq!(
        expand_use("api::{kinds::{Kind,Scope},ApiServer}"),
        ["api::kinds::Kind", "api::kinds::Scope", "api::ApiServer"]
    );
    let g = |edges: &[(&str, &str)]| {
        let mut g = std::collections::BTreeMap::<String, std::collections::BTreeSet<String>>::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
        }
        g
    };
    assert_eq!(find_cycle(&g(&[("a", "b"), ("b", "c")])), None);
    assert_eq!(
        find_cycle(&g(&[("a", "b"), ("b", "c"), ("c", "b")])),
        Some(vec!["b".into(), "c".into(), "b".into()])
    );
}

#[test]
fn the_simulator_modules_import_each_other_without_a_cycle() {
    // A cycle hides which layer is above which (ARCHITECTURE.md, code map): `world` drives the
    // actors, so no actor may import `world`.
    let graph = import_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph["world"].contains("actors::kubelet"), "{graph:?}");
    assert!(
        graph["scenario::targets"].contains("scenario::limits"),
        "`super::` imports are edges too: {graph:?}"
    );
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle in sim/src: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_production_modules_import_each_other_without_a_cycle() {
    // src/: the releases' ports share helpers downward (k8s, api, v0_10_0::utils); a helper
    // that reaches back into a reconciler ties the layers into a knot.
    let graph = import_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../src"));
    assert!(graph["tpu"].contains("v0_10_0::tpu"), "{graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle in src: {}", cycle.join(" -> "));
    }
}

#[test]
fn only_the_cli_and_the_scenario_loader_touch_files() {
    // Campaigns, explore and runs work on scenarios in memory; `main.rs` writes results and
    // `scenario/load.rs` reads scenario files and their manifests. `serve`, the other front end,
    // reads the scenario it records onto and writes the `--record` file.
    let bad = offenders(
        "src",
        &["std::fs", "File::", "read_to_string"],
        &[
            "main.rs",
            "scenario/load.rs",
            "serve/mod.rs",
            "serve/record.rs",
        ],
    );
    assert!(
        bad.is_empty(),
        "only main.rs, scenario/load.rs and serve's front files may touch files:\n{}",
        bad.join("\n")
    );
}

/// The name of the function a line starts, if it does (`fn`, `pub fn`, `pub(crate) fn`, ...).
fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let name = rest.strip_prefix("fn ")?;
    Some(name.split(['(', '<']).next().unwrap_or(name))
}

/// Functions longer than `max` lines in `text`, outside `#[cfg(test)]` modules (rustfmt's
/// layout: a function ends at the first `}` at its own indentation).
fn long_functions(text: &str, max: usize) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let Some(name) = fn_name(line) else { continue };
        if line.trim_end().ends_with(';') {
            continue;
        }
        let indent = &line[..line.len() - line.trim_start().len()];
        let close = format!("{indent}}}");
        if let Some(end) = lines[i..].iter().position(|l| *l == close) {
            if end + 1 > max {
                out.push((i + 1, name.to_string(), end + 1));
            }
        }
    }
    out
}

#[test]
fn long_functions_are_found() {
    let short = "fn a() {\n    x();\n}\n";
    assert!(long_functions(short, 3).is_empty());
    assert_eq!(long_functions(short, 2), vec![(1, "a".to_string(), 3)]);
    let nested = "impl X {\n    pub(crate) fn b<T>(t: T) {\n        y();\n    }\n}\n";
    assert_eq!(long_functions(nested, 2), vec![(2, "b".to_string(), 3)]);
    let tests = "#[cfg(test)]\nmod tests {\n    fn c() {\n        z();\n    }\n}\n";
    assert!(long_functions(tests, 1).is_empty());
}

#[test]
fn no_function_in_the_simulator_is_over_a_hundred_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let mut bad = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (line, name, len) in long_functions(&text, 100) {
            bad.push(format!("{}:{line}: fn {name} is {len} lines", f.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "split these into named helpers (ARCHITECTURE.md, \"Invariants\"):\n{}",
        bad.join("\n")
    );
}
