//! [`TensorElement`]: the Rust number types that are the elements of the
//! plain (unquantized) ggml tensor types.

use super::GgmlType;

pub(crate) mod sealed {
    /// Closes [`TensorElement`](super::TensorElement) to the format's set.
    pub trait Sealed {
        /// The type's name in errors.
        const NAME: &'static str;
    }
}

/// A Rust number type whose slices are the data of a plain ggml type:
/// `f32` (F32), `half::f16` (F16), `half::bf16` (BF16), `f64` (F64), `i8`,
/// `i16`, `i32`, `i64` (I8..I64). Typed tensor data is written with it
/// ([`Builder::add_tensor_typed`](crate::write::Builder::add_tensor_typed))
/// and viewed with it ([`Tensor::as_slice`](crate::read::Tensor::as_slice)).
/// Sealed: the set is the format's.
pub trait TensorElement: sealed::Sealed + bytemuck::Pod {
    /// The matching ggml type.
    const GGML_TYPE: GgmlType;
}

macro_rules! element {
    ($($ty:ty => $g:ident),*) => {$(
        impl sealed::Sealed for $ty {
            const NAME: &'static str = stringify!($ty);
        }
        impl TensorElement for $ty {
            const GGML_TYPE: GgmlType = GgmlType::$g;
        }
    )*};
}

element!(f32 => F32, f64 => F64, half::f16 => F16, half::bf16 => BF16, i8 => I8, i16 => I16, i32 => I32, i64 => I64);
