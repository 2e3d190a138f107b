//! Shared by the benches: are we measuring (`cargo bench`) or smoke-testing (`cargo test`)?

/// Criterion runs each bench once when the binary is not given `--bench` (as under
/// `cargo test --benches`); the big sizes are then skipped so the smoke run stays quick.
pub fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// Short warm-up and measurement: these benches are many, and their medians are stable.
#[allow(dead_code)]
pub fn config() -> criterion::Criterion {
    criterion::Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2))
}
