//! YAML parser errors in our words: file, line and the field at the error's position, with the
//! parser's own wording (Rust type names, its option names) replaced by the file format's.

use super::error::LoadError;

/// The YAML parser's options for scenario and manifest files: its budget raised so that a
/// scenario of `limits::STEP_COUNT_MAX` steps loads, while alias expansion ("billion laughs")
/// stays bounded by the parser's default anchor limits, and a file by `limits::FILE_BYTES_MAX`.
pub(crate) fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_events: 40_000_000,
            max_nodes: 20_000_000,
        },
    }
}

/// A budget breach as the parser prints it (`RecordedAnchorEvents { recorded_anchor_events:
/// 1000001 }`) in words: `recorded anchor events: 1000001`.
fn budget_words(limit: &str) -> String {
    match limit.split_once(" { ") {
        Some((_, fields)) => fields.trim_end_matches(" }").replace('_', " "),
        None => limit.to_string(),
    }
}

/// A parser error in a document that starts at line `doc_start` of `file`.
pub(crate) fn load_error(
    file: &str,
    doc_start: usize,
    doc: &str,
    e: &serde_saphyr::Error,
) -> LoadError {
    let text = e.to_string();
    let first = text
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ");
    // "line L column C: message"
    let message = match first.strip_prefix("line ") {
        Some(rest) => rest.split_once(": ").map_or(rest, |(_, m)| m),
        None => first,
    };
    let message = our_words(message);
    let loc = e.location().filter(|l| l.line() > 0);
    let Some(loc) = loc else {
        return LoadError {
            file: file.into(),
            line: Some(doc_start),
            message,
        };
    };
    let (line, column) = (loc.line() as usize, loc.column() as usize);
    let mut field = field_at(doc, line, column);
    if message.starts_with("invalid type:") || message.starts_with("invalid value:") {
        // The parser places some wrong values at their key: a list where a scalar belongs
        // (`maxSurge: [1]`, or `maxSurge:` over `- 1` lines), and any value of a type that
        // buffers it to choose (`maxSurge: 1.5` or `2147483648`, an IntOrString), which
        // `field_at` reads as the key's parent.
        if let Some(k) = key_at(doc, line, column) {
            let named = field
                .as_deref()
                .is_some_and(|f| f == k || f.ends_with(&format!(".{k}")));
            if !named {
                field = Some(field.map_or(k.to_string(), |f| format!("{f}.{k}")));
            }
        }
    }
    let message = match field {
        Some(f) if !message.starts_with(&format!("{f}:")) => format!("{f}: {message}"),
        _ => message,
    };
    LoadError {
        file: file.into(),
        line: Some(doc_start + line - 1),
        message,
    }
}

/// The parser's wording that names Rust rather than the file format, reworded (`serve` rewords
/// a YAML body's error with it too).
pub(crate) fn our_words(m: &str) -> String {
    let m = m
        .replace(", set DuplicateKeyPolicy in Options if acceptable", "")
        .replace(
            "recursive references require weak recursion types",
            "a YAML alias refers to a node that contains it (a recursive alias)",
        )
        .replace(
            ", use from_str_multiple or from_str_multiple_with_options",
            "",
        )
        .replace("; use Option<String>", "")
        .replace(
            "cannot deserialize null into string",
            "a value is required here (got null)",
        )
        .replace(
            "rejected by the configured policy",
            "is not a number this format accepts",
        );
    if m == "expected string scalar" {
        return "expected a single value here, not a list or a mapping".into();
    }
    if m.contains("untagged enum") || m.contains("did not match any variant") {
        return "this value has the wrong form (see the README's scenario format)".into();
    }
    if m.contains("multiple YAML documents detected") {
        return "a scenario file is one YAML document (a `---` starts another)".into();
    }
    if let Some(limit) = m.strip_prefix("budget breached: ") {
        return match limit.strip_prefix("Depth { depth: ") {
            Some(d) => format!(
                "nested {} levels deep: more than the parser's limit",
                d.trim_end_matches(" }")
            ),
            None => format!(
                "larger than the parser's limits allow ({})",
                budget_words(limit)
            ),
        };
    }
    m.replace(
        "invalid u32",
        "expected a whole number from 0 to 4294967295",
    )
    .replace(
        "invalid u64",
        "expected a whole number from 0 to 18446744073709551615",
    )
    .replace(
        "invalid i32",
        "expected a whole number from -2147483648 to 2147483647",
    )
    .replace(
        "invalid i64",
        "expected a whole number from -9223372036854775808 to 9223372036854775807",
    )
}

/// The dotted path of the key whose value is at `line`:`column` (1-based) of `doc`, from its
/// indentation and, on the line itself, the flow mappings (`{a: 1, b: x}`) before the column.
/// Best effort: `None` when the position is not under a key.
pub(crate) fn field_at(doc: &str, line: usize, column: usize) -> Option<String> {
    let lines: Vec<&str> = doc.lines().collect();
    let here = lines.get(line.checked_sub(1)?)?;
    let mut path = block_parents(&lines[..line - 1], here);
    let prefix: String = here.chars().take(column.saturating_sub(1)).collect();
    path.extend(flow_keys(&prefix));
    (!path.is_empty()).then(|| path.join("."))
}

/// The key of the line `line` of `doc` (1-based), if `column` is not past its start.
fn key_at(doc: &str, line: usize, column: usize) -> Option<&str> {
    let here = doc.lines().nth(line.checked_sub(1)?)?;
    let at = here
        .char_indices()
        .nth(column.checked_sub(1)?)
        .map(|(i, _)| i)?;
    // Only the line's own key: nothing but indentation (or an item's dash) before it.
    let before = here[..at].trim().trim_start_matches('-').trim();
    before.is_empty().then(|| key_of(&here[at..])).flatten()
}

/// The `key:` of a line (after any `- `), if it has one.
fn key_of(line: &str) -> Option<&str> {
    let t = line.trim_start().trim_start_matches("- ").trim_start();
    let (k, _) = t.split_once(':')?;
    let ok = !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || "_-./".contains(c));
    ok.then_some(k)
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The keys of the block mappings enclosing `here`, outermost first, a block list's key with
/// the index of the item `here` is in (`steps[2]`).
fn block_parents(before: &[&str], here: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut level = indent(here);
    // The item being climbed out of: its index goes on the next key up, the list's.
    let mut item = is_item(here).then(|| item_index(before, level));
    for (i, l) in before.iter().enumerate().rev() {
        let t = l.trim_start();
        let ind = indent(l);
        // A list written compactly (`containers:` with its `- ` items at the key's own
        // indentation): the key at the item's level is the list's key, not a sibling.
        let compact_key = item.is_some() && ind == level && !is_item(l) && key_of(l).is_some();
        if t.is_empty() || t.starts_with('#') || (ind >= level && !compact_key) {
            continue;
        }
        // The key of a `- key:` item line sits two columns right of its dash: at `level` it is
        // a sibling in the same item, not a parent.
        let key_ind = if is_item(l) { ind + 2 } else { ind };
        if key_ind < level || compact_key {
            if let Some(k) = key_of(l) {
                match item.take().filter(|_| !is_item(l)) {
                    Some(n) => out.push(format!("{k}[{n}]")),
                    None => out.push(k.to_string()),
                }
            }
        }
        if is_item(l) {
            item = Some(item_index(&before[..i], ind));
        }
        level = ind;
        if level == 0 {
            break;
        }
    }
    out.reverse();
    out
}

fn is_item(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("- ") || t == "-"
}

/// How many items of the block list at indentation `ind` come before the lines after `before`.
fn item_index(before: &[&str], ind: usize) -> usize {
    let mut n = 0;
    for l in before.iter().rev() {
        let t = l.trim_start();
        if t.is_empty() || t.starts_with('#') || indent(l) > ind {
            continue;
        }
        if indent(l) < ind || !is_item(l) {
            break;
        }
        n += 1;
    }
    n
}

/// The keys open at the end of `prefix` (a line up to the error's column): `a: {b: {c: ` gives
/// `a, b, c`; keys closed by `,` or `}` are dropped. A key whose value is a flow list carries the
/// index of the item the prefix ends in: `domains: [{a: 1}, {b: ` gives `domains[1], b`.
fn flow_keys(prefix: &str) -> Vec<String> {
    // (depth, key) pairs, and (depth, items before the current one) for each open `[`.
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut lists: Vec<(usize, usize)> = Vec::new();
    let mut depth: usize = 0;
    let mut word = String::new();
    // The quote that opened the string being read, if any.
    let mut quote: Option<char> = None;
    for c in prefix.chars() {
        let quoted = quote.is_some();
        match c {
            '"' | '\'' if quote.is_none() => quote = Some(c),
            _ if quote == Some(c) => quote = None,
            _ if quoted => {}
            '{' => depth += 1,
            '[' => {
                depth += 1;
                lists.push((depth, 0));
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                open.retain(|(d, _)| *d <= depth);
                lists.retain(|(d, _)| *d <= depth);
            }
            ',' => {
                open.retain(|(d, _)| *d < depth);
                if let Some((d, n)) = lists.last_mut() {
                    if *d == depth {
                        *n += 1;
                    }
                }
            }
            ':' => {
                open.retain(|(d, _)| *d < depth);
                let k = word.trim().trim_start_matches("- ").trim();
                if !k.is_empty() {
                    open.push((depth, k.to_string()));
                }
            }
            '#' => break,
            _ => {}
        }
        if quoted {
            if quote.is_some() {
                word.push(c); // inside the string (its closing quote is not)
            }
        } else if matches!(c, '{' | '[' | '}' | ']' | ',' | ':') {
            word.clear();
        } else if quote.is_none() {
            word.push(c); // not the opening quote
        }
    }
    open.into_iter()
        .map(|(d, k)| match lists.iter().find(|(ld, _)| *ld == d + 1) {
            Some((_, n)) => format!("{k}[{n}]"),
            None => k,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{field_at, our_words};

    #[test]
    fn no_rust_type_or_option_name_reaches_the_user() {
        let m =
            our_words("budget breached: RecordedAnchorEvents { recorded_anchor_events: 1000001 }");
        assert_eq!(
            m,
            "larger than the parser's limits allow (recorded anchor events: 1000001)"
        );
        let m = our_words("recursive references require weak recursion types");
        assert!(m.contains("recursive alias"), "{m}");
        let m =
            our_words("duplicate mapping key: a, set DuplicateKeyPolicy in Options if acceptable");
        assert_eq!(m, "duplicate mapping key: a");
    }

    #[test]
    fn fields_are_found_in_block_and_flow_style() {
        let doc = "metadata:\n  name: x\nspec: {replicas: x, size: 2}\nsteps:\n  - deletePod: {pod: a, gracePeriodSeconds: abc}\n  - waitFor: available\n    timeout: x\n";
        assert_eq!(field_at(doc, 2, 9).as_deref(), Some("metadata.name"));
        assert_eq!(field_at(doc, 3, 18).as_deref(), Some("spec.replicas"));
        assert_eq!(field_at(doc, 3, 27).as_deref(), Some("spec.size"));
        assert_eq!(
            field_at(doc, 5, 45).as_deref(),
            Some("steps[0].deletePod.gracePeriodSeconds")
        );
        assert_eq!(field_at(doc, 7, 14).as_deref(), Some("steps[1].timeout"));
        // Flow lists: the item's index on the list's key, a closed item's keys dropped.
        let flow =
            "nodes: {domains: [{key: a, nodesPerDomain: 1}, {key: b, nodesPerDomain: -1}]}\n";
        assert_eq!(
            field_at(flow, 1, 73).as_deref(),
            Some("nodes.domains[1].nodesPerDomain")
        );
        assert_eq!(
            field_at(flow, 1, 25).as_deref(),
            Some("nodes.domains[0].key")
        );
        // A compact block list: its items at the key's own indentation.
        let pod = "spec:\n  containers:\n  - name: a\n  - name: b\n    resources:\n      limits:\n        cpu: [1]\n";
        assert_eq!(
            field_at(pod, 7, 14).as_deref(),
            Some("spec.containers[1].resources.limits.cpu")
        );
        assert_eq!(
            field_at(pod, 4, 11).as_deref(),
            Some("spec.containers[1].name")
        );
        let json = r#"{"spec": {"leaderWorkerTemplate": {"size": 2147483648}}}"#;
        assert_eq!(
            field_at(json, 1, 46).as_deref(),
            Some("spec.leaderWorkerTemplate.size")
        );
        let nested = "steps:\n  # c\n  - wait: 1s\n\n  - check:\n      kind: Pod\n      match:\n        spec:\n          containers:\n            - name: a\n            - name: b\n              image: 7\n";
        assert_eq!(
            field_at(nested, 12, 22).as_deref(),
            Some("steps[1].check.match.spec.containers[1].image")
        );
    }
}
