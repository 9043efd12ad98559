//! Encoding of the header region: header, metadata entries and tensor
//! infos, in a given version and byte order.
//!
//! The fixed framing goes through the derive-generated wire codecs
//! (`HeaderWire`, `KvHeaderWire`, `ArrayHeaderWire`, `TensorInfoWire`);
//! values are appended directly, since they are the bulk of the bytes.

use std::io::Cursor;

use binrw::BinWrite;

use crate::error::{Error, Result};
use crate::format::{
    ArrayHeaderWire, ArrayView, Count, Ctx, Dims, Endian, GgufStr, HeaderWire, KvHeaderWire,
    TensorInfoWire, Value, ValueType, MAGIC, MAX_DIMS,
};
use crate::write::value::{MetaValue, OwnedArray, OwnedValue};

/// Appends encoded fields to a byte buffer.
pub(crate) struct Encoder {
    out: Cursor<Vec<u8>>,
    ctx: Ctx,
}

fn wire_err(e: binrw::Error) -> Error {
    match e {
        binrw::Error::Io(io) => Error::Io(io),
        other => Error::Encode {
            reason: other.to_string(),
        },
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
    pub(crate) fn new(ctx: Ctx, capacity: usize) -> Self {
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

    fn wire<T: for<'a> BinWrite<Args<'a> = Ctx>>(&mut self, v: &T) -> Result<()> {
        v.write_options(&mut self.out, binrw::Endian::Little, self.ctx)
            .map_err(wire_err)
    }

    put_num!(u8: u8, i8: i8, u16: u16, i16: i16, u32: u32, i32: i32, u64: u64, i64: i64, f32: f32, f64: f64);

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
            MetaValue::Borrowed(v) => self.borrowed(v),
        }
    }

    pub(crate) fn tensor_info(
        &mut self,
        name: &str,
        shape: &[u64],
        type_id: u32,
        offset: u64,
    ) -> Result<()> {
        let dims = Dims::new(shape).ok_or_else(|| Error::InvalidTensor {
            tensor: name.into(),
            reason: format!("{} dimensions, at most {MAX_DIMS} allowed", shape.len()),
        })?;
        self.wire(&TensorInfoWire {
            name: GgufStr(name),
            n_dims: shape.len() as u32,
            dims,
            ggml_type: type_id,
            offset,
        })
    }

    pub(crate) fn zeros(&mut self, n: usize) {
        let len = self.out.get_ref().len();
        self.out.get_mut().resize(len + n, 0);
        self.out.set_position((len + n) as u64);
    }

    fn owned(&mut self, v: &OwnedValue) -> Result<()> {
        match v {
            OwnedValue::U8(x) => self.u8(*x),
            OwnedValue::I8(x) => self.i8(*x),
            OwnedValue::U16(x) => self.u16(*x),
            OwnedValue::I16(x) => self.i16(*x),
            OwnedValue::U32(x) => self.u32(*x),
            OwnedValue::I32(x) => self.i32(*x),
            OwnedValue::F32(x) => self.f32(*x),
            OwnedValue::Bool(x) => self.u8(u8::from(*x)),
            OwnedValue::U64(x) => self.u64(*x),
            OwnedValue::I64(x) => self.i64(*x),
            OwnedValue::F64(x) => self.f64(*x),
            OwnedValue::String(s) => self.str(s)?,
            OwnedValue::Array(a) => self.owned_array(a)?,
        }
        Ok(())
    }

    fn owned_array(&mut self, a: &OwnedArray) -> Result<()> {
        self.wire(&ArrayHeaderWire {
            element_type: a.element_type().id(),
            len: Count(a.len() as u64),
        })?;
        macro_rules! each {
            ($v:expr, $put:ident) => {
                for x in $v {
                    self.$put(*x);
                }
            };
        }
        match a {
            OwnedArray::U8(v) => self.raw(v),
            OwnedArray::I8(v) => each!(v, i8),
            OwnedArray::U16(v) => each!(v, u16),
            OwnedArray::I16(v) => each!(v, i16),
            OwnedArray::U32(v) => each!(v, u32),
            OwnedArray::I32(v) => each!(v, i32),
            OwnedArray::F32(v) => each!(v, f32),
            OwnedArray::U64(v) => each!(v, u64),
            OwnedArray::I64(v) => each!(v, i64),
            OwnedArray::F64(v) => each!(v, f64),
            OwnedArray::Bool(v) => {
                for x in v {
                    self.u8(u8::from(*x));
                }
            }
            OwnedArray::String(v) => {
                for s in v {
                    self.str(s)?;
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

    fn borrowed(&mut self, v: &Value<'_>) -> Result<()> {
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
            Value::Array(a) => self.borrowed_array(&a)?,
        }
        Ok(())
    }

    fn borrowed_array(&mut self, a: &ArrayView<'_>) -> Result<()> {
        self.wire(&ArrayHeaderWire {
            element_type: a.element_type().id(),
            len: Count(a.len()),
        })?;
        // Same layout: the validated bytes are already what we would write.
        if a.ctx() == self.ctx || (a.element_type().fixed_size() == Some(1)) {
            self.raw(a.raw_bytes());
            return Ok(());
        }
        match a.element_type() {
            ValueType::String => {
                for s in a.strings().into_iter().flatten() {
                    self.str(s)?;
                }
            }
            ValueType::Array => {
                for inner in a.iter().filter_map(|v| v.as_array()) {
                    self.borrowed_array(&inner)?;
                }
            }
            _ => {
                for v in a.iter() {
                    self.borrowed(&v)?;
                }
            }
        }
        Ok(())
    }
}

/// Encoded size of a value in `ctx`, without encoding it.
pub(crate) fn value_len(v: &MetaValue<'_>, ctx: Ctx) -> u64 {
    match v {
        MetaValue::Owned(OwnedValue::String(s)) => ctx.count_width() as u64 + s.len() as u64,
        MetaValue::Owned(OwnedValue::Array(a)) => owned_array_len(a, ctx),
        MetaValue::Owned(o) => o.value_type().fixed_size().unwrap_or(0) as u64,
        MetaValue::Borrowed(Value::String(s)) => ctx.count_width() as u64 + s.len() as u64,
        MetaValue::Borrowed(Value::Array(a)) => borrowed_array_len(a, ctx),
        MetaValue::Borrowed(b) => b.value_type().fixed_size().unwrap_or(0) as u64,
    }
}

fn owned_array_len(a: &OwnedArray, ctx: Ctx) -> u64 {
    let w = ctx.count_width() as u64;
    let body = match a {
        OwnedArray::String(v) => v.iter().map(|s| w + s.len() as u64).sum(),
        OwnedArray::Array(v) => v.iter().map(|inner| owned_array_len(inner, ctx)).sum(),
        other => other.len() as u64 * other.element_type().fixed_size().unwrap_or(0) as u64,
    };
    4 + w + body
}

fn borrowed_array_len(a: &ArrayView<'_>, ctx: Ctx) -> u64 {
    let w = ctx.count_width() as u64;
    let body = if a.ctx().version == ctx.version || a.element_type().fixed_size().is_some() {
        // Byte order does not change sizes; only v1's narrower counts do.
        a.raw_bytes().len() as u64
    } else if a.element_type() == ValueType::String {
        a.strings()
            .into_iter()
            .flatten()
            .map(|s| w + s.len() as u64)
            .sum()
    } else {
        a.iter()
            .filter_map(|v| v.as_array())
            .map(|inner| borrowed_array_len(&inner, ctx))
            .sum()
    };
    4 + w + body
}
