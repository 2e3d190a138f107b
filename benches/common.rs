//! Shared by the benches: are we measuring (`cargo bench`) or smoke-testing (`cargo test`)?

/// Criterion runs each bench once when the binary is not given `--bench` (as under
/// `cargo test --benches`); the big sizes are then skipped so the smoke run stays quick.
pub fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}
