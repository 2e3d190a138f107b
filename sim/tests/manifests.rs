//! Real LWS example manifests (kubernetes-sigs/lws `docs/examples`, in ../shared) load through
//! the scenario parser and pass the release's webhook and v0.10.0's. The folder lives outside
//! the repository, so the test is `#[ignore]`d: run it with `cargo test --test manifests --
//! --ignored`; it fails, naming the folder, when the folder is absent.

use std::path::Path;

use lws::profile::Flags;
use lws_sim::scenario::manifest::{parse_lenient, Manifest};

#[test]
#[ignore = "needs ../shared/upstream-manifests (kubernetes-sigs/lws docs/examples), outside the repository"]
fn upstream_manifests_load_and_pass_the_webhook() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/upstream-manifests");
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}: the upstream example manifests", dir.display()));
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut lws_count = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let (manifests, skipped) =
            parse_lenient(&f.display().to_string(), &text).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            skipped.iter().all(|k| k == "HorizontalPodAutoscaler"),
            "{}: skipped {skipped:?}",
            f.display()
        );
        for m in manifests {
            if let Manifest::LeaderWorkerSet(l) = m {
                lws_count += 1;
                // The v0.3.0 sample is checked against v0.3.0's webhook, the rest against v0.4.1's.
                let flags = if f.to_string_lossy().contains("v0.3.0") {
                    Flags::v0_3_0()
                } else {
                    Flags::v0_4_1()
                };
                let mut at_v0_10_0 = (*l).clone();
                lws::v0_10_0::webhook::default_lws(&mut at_v0_10_0);
                lws::v0_10_0::webhook::validate_lws(&at_v0_10_0, None)
                    .unwrap_or_else(|e| panic!("{} at v0.10.0: {e}", f.display()));
                let mut l = *l;
                lws::webhook::default_lws(&mut l, &flags);
                lws::webhook::validate_lws(&l, None, &flags)
                    .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                assert!(l.size() >= 1 && l.replicas() >= 1);
            }
        }
    }
    assert_eq!(lws_count, 12, "every LeaderWorkerSet document loaded");
}
