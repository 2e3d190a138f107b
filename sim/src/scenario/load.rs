//! Reading scenarios and their manifests from disk: with `main.rs`, the only place in the
//! simulator that touches files (`sim/tests/tidy.rs`).

use std::path::{Path, PathBuf};

use super::limits::FILE_BYTES_MAX;
use super::manifest::{self, LoadError, Manifest};
use super::{err, parse_spec, ManifestFiles, Scenario, SpecLines};

/// Manifest files named relative to a directory (the scenario file's).
pub struct ManifestDir(pub PathBuf);

/// A file's text: only a regular file (never a FIFO or a device, which could block or never
/// end) of at most `FILE_BYTES_MAX` bytes, read through a bound so a file growing meanwhile
/// cannot exceed it.
pub fn read_text(path: &Path) -> Result<String, LoadError> {
    use std::io::Read;
    let name = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| err(&name, format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(err(&name, "cannot read: not a regular file"));
    }
    let too_big = || {
        err(
            &name,
            format!("cannot read: larger than the limit of {FILE_BYTES_MAX} bytes (16 MiB)"),
        )
    };
    if meta.len() > FILE_BYTES_MAX {
        return Err(too_big());
    }
    let f = std::fs::File::open(path).map_err(|e| err(&name, format!("cannot read: {e}")))?;
    let mut bytes = Vec::new();
    f.take(FILE_BYTES_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| err(&name, format!("cannot read: {e}")))?;
    if bytes.len() as u64 > FILE_BYTES_MAX {
        return Err(too_big());
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        LoadError {
            file: name.clone(),
            line: Some(line),
            message: "not UTF-8 text (YAML files are UTF-8)".into(),
        }
    })?;
    // YAML breaks lines at CR, LF and CRLF alike; the error locator reads lines at LF, so a
    // file written with CR alone (or a mix) is read with LF line breaks (same line numbers).
    Ok(if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text
    })
}

/// A manifest file read again after it was loaded, to place an error the API server gave at
/// apply time; `None` when it cannot be (an in-memory manifest has no file).
pub(crate) fn read_again(file: &str) -> Option<String> {
    read_text(Path::new(file)).ok()
}

fn read_manifest_file(path: &Path) -> Result<Vec<Manifest>, LoadError> {
    let name = path.display().to_string();
    let objects = manifest::parse(&name, &read_text(path)?)?;
    if objects.is_empty() {
        // An empty (or comments-only) file would run the scenario with nothing in it.
        return Err(err(
            &name,
            "holds no object: a manifest file needs at least one document",
        ));
    }
    Ok(objects)
}

/// The directory a file is in: "." for a bare file name (whose parent is "", which does not
/// canonicalize).
pub fn dir_of(p: &Path) -> &Path {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// An output file `flag` names may be created or truncated without waiting: not a directory,
/// and not a named FIFO (opening one to write blocks until a reader comes: a run that never
/// starts). What `/dev` and `/proc` name (`/dev/null`, `/dev/stdout` on a pipe) is the caller's.
pub fn check_output(flag: &str, path: &Path) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let t = meta.file_type();
    let what = if t.is_dir() {
        "a directory"
    } else if t.is_fifo() && !path.starts_with("/dev") && !path.starts_with("/proc") {
        "a FIFO (writing would wait for a reader)"
    } else if t.is_socket() || t.is_block_device() {
        "a socket or block device"
    } else {
        return Ok(());
    };
    Err(format!(
        "{flag} {}: {what}; an output is a file to create or overwrite",
        path.display()
    ))
}

/// Whether two paths name one file: by device and inode when both exist (a hard link is the
/// same file under another name), else by their canonical directory and name (an output not
/// written yet).
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        return (ma.dev(), ma.ino()) == (mb.dev(), mb.ino());
    }
    fn identity(p: &Path) -> PathBuf {
        if let Ok(c) = p.canonicalize() {
            return c;
        }
        match (dir_of(p).canonicalize(), p.file_name()) {
            (Ok(d), Some(name)) => d.join(name),
            _ => p.to_path_buf(),
        }
    }
    identity(a) == identity(b)
}

impl ManifestFiles for ManifestDir {
    fn read(&self, name: &str) -> Result<(String, super::Manifests), LoadError> {
        let p = self.0.join(name);
        Ok((p.display().to_string(), read_manifest_file(&p)?.into()))
    }
}

impl Scenario {
    /// Read and validate a scenario file and everything it references.
    pub fn load(path: &Path) -> Result<Scenario, LoadError> {
        Scenario::parse(path, &read_text(path)?)
    }

    /// A scenario file's text, as if read from `path` (manifests are read beside it).
    pub fn parse(path: &Path, text: &str) -> Result<Scenario, LoadError> {
        let spec = parse_spec(&path.display().to_string(), text)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let lines = SpecLines::of(text);
        Scenario::from_spec_at(path, spec, lines, &ManifestDir(dir.to_path_buf()))
    }
}
