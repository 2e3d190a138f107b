//! The shape of `schema.rs`: each message's fields by number, with the JSON name, type and
//! cardinality of each.

/// How often a field may appear, and whether its zero value means "unset": a Go value field
/// (`One`) is marshalled even when zero, so its zero is dropped as JSON's `omitempty` drops it;
/// a Go pointer (`Ptr`) is marshalled only when set, so its zero is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Card {
    One,
    Ptr,
    Rep,
}

/// A field's type, as the JSON it becomes.
#[derive(Debug)]
pub enum Ty {
    Str,
    Int,
    Bool,
    /// `metav1.Time` (`seconds`, `nanos`): RFC 3339 to the second.
    Time,
    /// `metav1.MicroTime`: RFC 3339 to the microsecond.
    MicroTime,
    /// `intstr.IntOrString` (`type`, `intVal`, `strVal`): a number or a string.
    IntOrString,
    /// `resource.Quantity` (`string`): its string.
    Quantity,
    /// `runtime.RawExtension` or `metav1.FieldsV1` (`raw`): the JSON its bytes hold.
    RawJson,
    Msg(&'static Message),
    /// An embedded message whose JSON fields are the parent's own (`json:",inline"`).
    Inline(&'static Message),
    /// `map<string, V>`: entries of `key` (1) and `value` (2).
    Map(&'static Ty),
}

#[derive(Debug)]
pub struct Field {
    pub number: u64,
    pub json: &'static str,
    pub ty: Ty,
    pub card: Card,
}

#[derive(Debug)]
pub struct Message {
    pub name: &'static str,
    pub fields: &'static [Field],
}

impl Message {
    pub fn field(&self, number: u64) -> Option<&Field> {
        self.fields.iter().find(|f| f.number == number)
    }
}

pub const fn one(number: u64, json: &'static str, ty: Ty) -> Field {
    Field {
        number,
        json,
        ty,
        card: Card::One,
    }
}

pub const fn ptr(number: u64, json: &'static str, ty: Ty) -> Field {
    Field {
        number,
        json,
        ty,
        card: Card::Ptr,
    }
}

pub const fn rep(number: u64, json: &'static str, ty: Ty) -> Field {
    Field {
        number,
        json,
        ty,
        card: Card::Rep,
    }
}
