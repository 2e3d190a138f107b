//! A load error: which file, which line, what (exit 2).

use std::fmt;

/// A load error: which file, which line, what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for LoadError {
    /// One line: control characters (a newline in a file name a scenario gave) are escaped.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self.line {
            Some(l) => format!("{}:{}: {}", self.file, l, self.message),
            None => format!("{}: {}", self.file, self.message),
        };
        if text.chars().any(char::is_control) {
            f.write_str(&text.escape_debug().to_string())
        } else {
            f.write_str(&text)
        }
    }
}
