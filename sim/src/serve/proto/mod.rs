//! The protobuf bodies client-go's typed clients send as `application/vnd.kubernetes.protobuf`
//! (kubectl from 1.32 on: `create namespace`, `create service`, `create pdb`, `debug node`,
//! `auth can-i`): the wire format, the `k8s\0` envelope around a `runtime.Unknown`
//! (apimachinery `pkg/runtime/serializer/protobuf/protobuf.go`, `pkg/runtime/generated.proto`),
//! and (`json.rs`, by the field table `schema.rs`) the object as the JSON the API takes.

mod json;
mod schema;
mod schema_types;

pub use json::{object, Refusal};

/// The four bytes before every Kubernetes protobuf object.
const MAGIC: &[u8] = b"k8s\0";

/// One field's value on the wire (a fixed-width value's bits are not kept: no Kubernetes
/// message has one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// One field of a message: its number and value.
pub type Field<'a> = (u64, Wire<'a>);

/// The fields of one message, in wire order; an error names what is malformed.
pub fn fields(mut buf: &[u8]) -> Result<Vec<Field<'_>>, String> {
    let mut out = Vec::new();
    while !buf.is_empty() {
        let key = varint(&mut buf)?;
        let (number, wire) = (key >> 3, key & 7);
        let value = match wire {
            0 => Wire::Varint(varint(&mut buf)?),
            1 => take(&mut buf, 8).map(|_| Wire::Fixed)?,
            2 => {
                let len = usize::try_from(varint(&mut buf)?).map_err(|_| "length overflows")?;
                Wire::Bytes(take(&mut buf, len)?)
            }
            5 => take(&mut buf, 4).map(|_| Wire::Fixed)?,
            w => {
                return Err(format!(
                    "field {number} has wire type {w}, not one of 0, 1, 2, 5"
                ))
            }
        };
        out.push((number, value));
    }
    Ok(out)
}

pub(super) fn varint(buf: &mut &[u8]) -> Result<u64, String> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = buf.split_first().ok_or("a varint is cut short")?;
        *buf = rest;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("a varint runs past 64 bits".into())
}

fn take<'a>(buf: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
    if buf.len() < n {
        return Err(format!("a field of {n} bytes runs past the end"));
    }
    let (head, rest) = buf.split_at(n);
    *buf = rest;
    Ok(head)
}

/// The last value of field `number` (protobuf's rule for a repeated singular field), if set.
pub fn last<'a>(fields: &[Field<'a>], number: u64) -> Option<Wire<'a>> {
    fields
        .iter()
        .rev()
        .find(|(n, _)| *n == number)
        .map(|&(_, v)| v)
}

/// The last value of length-delimited field `number`, if set.
pub fn get<'a>(fields: &[Field<'a>], number: u64) -> Option<&'a [u8]> {
    match last(fields, number)? {
        Wire::Bytes(b) => Some(b),
        _ => None,
    }
}

/// A string field, if set and UTF-8.
pub fn string(fields: &[Field<'_>], number: u64) -> Result<Option<String>, String> {
    get(fields, number)
        .map(|b| String::from_utf8(b.to_vec()).map_err(|_| format!("field {number} is not UTF-8")))
        .transpose()
}

/// A Kubernetes protobuf body: (apiVersion, kind, the object's own message bytes).
pub fn envelope(body: &[u8]) -> Result<(String, String, &[u8]), String> {
    let rest = body
        .strip_prefix(MAGIC)
        .ok_or("the body does not start with the Kubernetes protobuf prefix")?;
    let unknown = fields(rest)?;
    let type_meta = fields(get(&unknown, 1).unwrap_or_default())?;
    let api_version = string(&type_meta, 1)?.unwrap_or_default();
    let kind = string(&type_meta, 2)?.unwrap_or_default();
    Ok((api_version, kind, get(&unknown, 2).unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_lengths_are_bounded() {
        assert!(fields(&[0x0a, 0x05, b'a'])
            .unwrap_err()
            .contains("past the end"));
        assert!(fields(&[0x08]).unwrap_err().contains("cut short"));
        let overlong = [[0x08].as_slice(), &[0xff; 10], &[0x01]].concat();
        assert!(fields(&overlong).unwrap_err().contains("64 bits"));
        assert!(fields(&[0x0b]).unwrap_err().contains("wire type 3"));
        let f = fields(&[0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i']).unwrap();
        assert_eq!(
            f,
            vec![(1, Wire::Varint(150)), (2, Wire::Bytes(&b"hi"[..]))]
        );
        assert_eq!(string(&f, 2).unwrap().as_deref(), Some("hi"));
    }

    #[test]
    fn a_body_without_the_prefix_is_refused() {
        assert!(envelope(b"{}").unwrap_err().contains("prefix"));
    }
}
