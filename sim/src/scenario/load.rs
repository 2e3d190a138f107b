//! Reading scenarios and their manifests from disk: with `main.rs`, the only place in the
//! simulator that touches files (`sim/tests/tidy.rs`).

use std::path::{Path, PathBuf};

use super::manifest::{self, LoadError, Manifest};
use super::{err, parse_spec, ManifestFiles, Scenario};

/// Manifest files named relative to a directory (the scenario file's).
pub struct ManifestDir(pub PathBuf);

fn read_manifest_file(path: &Path) -> Result<Vec<Manifest>, LoadError> {
    let name = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| err(&name, format!("cannot read: {e}")))?;
    manifest::parse(&name, &text)
}

impl ManifestFiles for ManifestDir {
    fn read(&self, name: &str) -> Result<(String, Vec<Manifest>), LoadError> {
        let p = self.0.join(name);
        Ok((p.display().to_string(), read_manifest_file(&p)?))
    }
}

impl Scenario {
    /// Read and validate a scenario file and everything it references.
    pub fn load(path: &Path) -> Result<Scenario, LoadError> {
        let file = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|e| err(&file, format!("cannot read: {e}")))?;
        Scenario::parse(path, &text)
    }

    /// A scenario file's text, as if read from `path` (manifests are read beside it).
    pub fn parse(path: &Path, text: &str) -> Result<Scenario, LoadError> {
        let spec = parse_spec(&path.display().to_string(), text)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Scenario::from_spec(path, spec, &ManifestDir(dir.to_path_buf()))
    }
}
