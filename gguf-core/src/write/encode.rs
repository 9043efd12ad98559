//! Encoding of the header region: header, metadata entries and tensor
//! infos, in a given version and byte order.
//!
//! The fixed framing goes through the derive-generated wire codecs
//! (`HeaderWire`, `KvHeaderWire`, `ArrayHeaderWire`, `TensorInfoWire`),
//! with borrowed names (`GgufStr`) and inline dimensions (`Dims`), so
//! framing an entry copies nothing; values are appended directly, since
//! they are the bulk of the bytes, by one encoder for [`Value`] that owned
//! values go through too.

use std::io::Cursor;

use binrw::BinWrite;

use crate::error::{BuildError, Error, Result};
use crate::format::{
    ArrayHeaderWire, ArrayView, Count, Dims, Endian, GgufStr, HeaderWire, KvHeaderWire, OwnedArray,
    OwnedValue, TensorInfoWire, Value, ValueType, WireFormat, MAGIC, MAX_DIMS,
};
use crate::write::value::MetaValue;

/// Appends encoded fields to a byte buffer.
pub(crate) struct Encoder {
    out: Cursor<Vec<u8>>,
    ctx: WireFormat,
}

fn wire_err(e: binrw::Error) -> Error {
    match e {
        binrw::Error::Io(io) => Error::from(io),
        other => Error::Build(BuildError::Encode {
            reason: other.to_string(),
        }),
    }
}

macro_rules! put_num {
    ($($name:ident: $ty:ty),*) => {$(
        pub(crate) fn $name(&mut self, v: $ty) {
            let bytes = match self.ctx.endian {
                Endian::Little => v.to_le_bytes(),
                Endian::Big => v.to_be_bytes(),
            };
            self.raw(&bytes);
        }
    )*};
}

impl Encoder {
    pub(crate) fn new(ctx: WireFormat, capacity: usize) -> Self {
        Encoder {
            out: Cursor::new(Vec::with_capacity(capacity)),
            ctx,
        }
    }

    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.out.into_inner()
    }

    pub(crate) fn len(&self) -> usize {
        self.out.get_ref().len()
    }

    fn raw(&mut self, b: &[u8]) {
        self.out.get_mut().extend_from_slice(b);
        self.out.set_position(self.out.get_ref().len() as u64);
    }

    fn wire<T: for<'a> BinWrite<Args<'a> = WireFormat>>(&mut self, v: &T) -> Result<()> {
        v.write_options(&mut self.out, self.ctx.endian.binrw(), self.ctx)
            .map_err(wire_err)
    }

    put_num!(u8: u8, i8: i8, u16: u16, i16: i16, u32: u32, i32: i32, u64: u64, i64: i64);

    fn count(&mut self, n: u64) -> Result<()> {
        self.wire(&Count(n))
    }

    fn str(&mut self, s: &str) -> Result<()> {
        self.count(s.len() as u64)?;
        self.raw(s.as_bytes());
        Ok(())
    }

    pub(crate) fn header(&mut self, tensor_count: u64, kv_count: u64) -> Result<()> {
        self.wire(&HeaderWire {
            magic: MAGIC,
            version: self.ctx.version,
            tensor_count: Count(tensor_count),
            kv_count: Count(kv_count),
        })
    }

    pub(crate) fn kv(&mut self, key: &str, value: &MetaValue<'_>) -> Result<()> {
        self.wire(&KvHeaderWire {
            key: GgufStr(key),
            value_type: value.value_type().id(),
        })?;
        match value {
            MetaValue::Owned(v) => self.owned(v),
            MetaValue::Borrowed(v) => self.value(v),
        }
    }

    pub(crate) fn tensor_info(
        &mut self,
        name: &str,
        shape: &[u64],
        type_id: u32,
        offset: u64,
    ) -> Result<()> {
        let dims = Dims::new(shape).ok_or_else(|| {
            Error::Build(BuildError::InvalidTensor {
                tensor: name.into(),
                reason: format!("{} dimensions, at most {MAX_DIMS} allowed", shape.len()),
            })
        })?;
        self.wire(&TensorInfoWire {
            name: GgufStr(name),
            n_dims: shape.len() as u32,
            dims,
            ggml_type: type_id,
            offset,
        })
    }

    /// An owned value: through [`value`](Self::value) as a borrowed
    /// [`Value`], arrays element by element.
    fn owned(&mut self, v: &OwnedValue) -> Result<()> {
        match v {
            OwnedValue::Array(a) => self.owned_array(a),
            other => other.as_value().map_or(Ok(()), |v| self.value(&v)),
        }
    }

    fn owned_array(&mut self, a: &OwnedArray) -> Result<()> {
        self.array_header(a.element_type(), a.len())?;
        macro_rules! each {
            ($v:expr, $variant:ident) => {
                for &x in $v {
                    self.value(&Value::$variant(x))?;
                }
            };
        }
        match a {
            OwnedArray::U8(v) => self.raw(v),
            OwnedArray::I8(v) => each!(v, I8),
            OwnedArray::U16(v) => each!(v, U16),
            OwnedArray::I16(v) => each!(v, I16),
            OwnedArray::U32(v) => each!(v, U32),
            OwnedArray::I32(v) => each!(v, I32),
            OwnedArray::F32(v) => each!(v, F32),
            OwnedArray::U64(v) => each!(v, U64),
            OwnedArray::I64(v) => each!(v, I64),
            OwnedArray::F64(v) => each!(v, F64),
            OwnedArray::Bool(v) => each!(v, Bool),
            OwnedArray::String(v) => {
                for s in v {
                    self.value(&Value::String(s))?;
                }
            }
            OwnedArray::Array(v) => {
                for inner in v {
                    self.owned_array(inner)?;
                }
            }
        }
        Ok(())
    }

    fn array_header(&mut self, element_type: ValueType, len: usize) -> Result<()> {
        self.wire(&ArrayHeaderWire {
            element_type: element_type.id(),
            len: Count(len as u64),
        })
    }

    /// The one value encoder: scalars, strings, and arrays viewed in a
    /// file (their bytes copied as they are when the layout is the same).
    fn value(&mut self, v: &Value<'_>) -> Result<()> {
        match *v {
            Value::U8(x) => self.u8(x),
            Value::I8(x) => self.i8(x),
            Value::U16(x) => self.u16(x),
            Value::I16(x) => self.i16(x),
            Value::U32(x) => self.u32(x),
            Value::I32(x) => self.i32(x),
            // Bits, not values: NaN payloads survive a round trip.
            Value::F32(x) => self.u32(x.to_bits()),
            Value::F64(x) => self.u64(x.to_bits()),
            Value::Bool(x) => self.u8(u8::from(x)),
            Value::U64(x) => self.u64(x),
            Value::I64(x) => self.i64(x),
            Value::String(s) => self.str(s)?,
            Value::Array(a) => self.array_view(&a)?,
        }
        Ok(())
    }

    fn array_view(&mut self, a: &ArrayView<'_>) -> Result<()> {
        self.array_header(a.element_type(), a.len())?;
        // Same layout: the validated bytes are already what we would write.
        if a.wire_format() == self.ctx || (a.element_type().fixed_size() == Some(1)) {
            self.raw(a.raw_bytes());
            return Ok(());
        }
        for v in a.iter() {
            self.value(&v)?;
        }
        Ok(())
    }
}

/// Encoded size of a value in `ctx`, without encoding it.
pub(crate) fn value_len(v: &MetaValue<'_>, ctx: WireFormat) -> u64 {
    match v {
        MetaValue::Owned(OwnedValue::Array(a)) => owned_array_len(a, ctx),
        MetaValue::Owned(o) => o.as_value().map_or(0, |v| borrowed_len(&v, ctx)),
        MetaValue::Borrowed(b) => borrowed_len(b, ctx),
    }
}

fn borrowed_len(v: &Value<'_>, ctx: WireFormat) -> u64 {
    match v {
        Value::String(s) => ctx.count_width() as u64 + s.len() as u64,
        Value::Array(a) => array_view_len(a, ctx),
        other => other.value_type().fixed_size().unwrap_or(0) as u64,
    }
}

fn owned_array_len(a: &OwnedArray, ctx: WireFormat) -> u64 {
    let w = ctx.count_width() as u64;
    let body = match a {
        OwnedArray::String(v) => v.iter().map(|s| w + s.len() as u64).sum(),
        OwnedArray::Array(v) => v.iter().map(|inner| owned_array_len(inner, ctx)).sum(),
        other => other.len() as u64 * other.element_type().fixed_size().unwrap_or(0) as u64,
    };
    4 + w + body
}

fn array_view_len(a: &ArrayView<'_>, ctx: WireFormat) -> u64 {
    let body = if a.wire_format().version == ctx.version || a.element_type().fixed_size().is_some()
    {
        // Byte order does not change sizes; only v1's narrower counts do.
        a.raw_bytes().len() as u64
    } else {
        a.iter().map(|v| borrowed_len(&v, ctx)).sum()
    };
    4 + ctx.count_width() as u64 + body
}
