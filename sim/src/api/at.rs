//! A field path for validation messages, built only when a message is: `At` is a chain of
//! borrowed steps on the stack (`spec.containers[0].ports[1]`), written out through `Display`.
//! Validating a valid object, the common case on every create, formats no path.

use std::fmt;

/// One field path: a root and the steps below it.
#[derive(Clone, Copy)]
pub struct At<'a> {
    parent: Option<&'a At<'a>>,
    step: Step<'a>,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    /// The path the caller starts from (`spec.template.spec`).
    Root(&'a str),
    /// `.name`
    Field(&'a str),
    /// `[i]`
    Index(usize),
    /// `.name[i]`
    Item(&'a str, usize),
    /// `.name[key]`, as a map entry is named (`resources.limits[cpu]`).
    Entry(&'a str, &'a str),
}

impl<'a> At<'a> {
    pub fn root(path: &'a str) -> Self {
        At {
            parent: None,
            step: Step::Root(path),
        }
    }

    fn below(&'a self, step: Step<'a>) -> At<'a> {
        At {
            parent: Some(self),
            step,
        }
    }

    pub fn field(&'a self, name: &'a str) -> At<'a> {
        self.below(Step::Field(name))
    }

    pub fn index(&'a self, i: usize) -> At<'a> {
        self.below(Step::Index(i))
    }

    pub fn item(&'a self, list: &'a str, i: usize) -> At<'a> {
        self.below(Step::Item(list, i))
    }

    pub fn entry(&'a self, map: &'a str, key: &'a str) -> At<'a> {
        self.below(Step::Entry(map, key))
    }
}

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(parent) = self.parent {
            parent.fmt(f)?;
        }
        match self.step {
            Step::Root(p) => f.write_str(p),
            Step::Field(n) => write!(f, ".{n}"),
            Step::Index(i) => write!(f, "[{i}]"),
            Step::Item(n, i) => write!(f, ".{n}[{i}]"),
            Step::Entry(n, k) => write!(f, ".{n}[{k}]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::At;

    #[test]
    fn writes_each_kind_of_step() {
        let root = At::root("spec");
        let c = root.item("containers", 2);
        let r = c.field("resources");
        assert_eq!(
            r.entry("limits", "cpu").to_string(),
            "spec.containers[2].resources.limits[cpu]"
        );
        let t = root.field("tolerations");
        assert_eq!(
            t.index(0).field("key").to_string(),
            "spec.tolerations[0].key"
        );
    }
}
