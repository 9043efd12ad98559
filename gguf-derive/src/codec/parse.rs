//! Input and `#[gguf(...)]` attributes -> [`CodecStruct`].

use syn::{Data, DeriveInput, Expr, Fields, GenericArgument, Ident, PathArguments, Type};

/// A wire struct, ready for code generation.
pub struct CodecStruct {
    pub name: Ident,
    pub generics: syn::Generics,
    pub fields: Vec<CodecField>,
}

/// How one field is encoded.
pub struct CodecField {
    pub name: Ident,
    pub ty: Type,
    pub kind: FieldKind,
}

pub enum FieldKind {
    /// A number or byte array: byte order only.
    Primitive,
    /// A type whose codec takes the full `WireFormat`.
    Contextual,
    /// `Vec<elem>` with `count` elements.
    Counted {
        elem: Box<Type>,
        elem_primitive: bool,
        count: Box<Expr>,
    },
    /// A type that reads `count` elements itself, taking `(WireFormat, count)`.
    CountedBy { count: Box<Expr> },
}

pub fn parse(input: &DeriveInput) -> syn::Result<CodecStruct> {
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "GgufCodec can only be derived for structs with named fields",
        ));
    };
    let Fields::Named(named) = &data.fields else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "GgufCodec can only be derived for structs with named fields",
        ));
    };
    let mut fields = Vec::new();
    for field in &named.named {
        let count = field_count_attr(field)?;
        let name = field
            .ident
            .clone()
            .ok_or_else(|| syn::Error::new_spanned(field, "field without a name"))?;
        let kind = match (count, vec_elem(&field.ty)) {
            (Some(count), Some(elem)) => FieldKind::Counted {
                elem_primitive: is_primitive(&elem),
                elem: Box::new(elem),
                count: Box::new(count),
            },
            (Some(count), None) if !is_primitive(&field.ty) => FieldKind::CountedBy {
                count: Box::new(count),
            },
            (Some(_), None) => {
                return Err(syn::Error::new_spanned(
                    &field.ty,
                    "#[gguf(count = ...)] needs a Vec<T> field",
                ))
            }
            (None, Some(_)) => {
                return Err(syn::Error::new_spanned(
                    &field.ty,
                    "a Vec<T> field needs #[gguf(count = ...)] to know its length",
                ))
            }
            (None, None) if is_primitive(&field.ty) => FieldKind::Primitive,
            (None, None) => FieldKind::Contextual,
        };
        fields.push(CodecField {
            name,
            ty: field.ty.clone(),
            kind,
        });
    }
    Ok(CodecStruct {
        name: input.ident.clone(),
        generics: input.generics.clone(),
        fields,
    })
}

fn field_count_attr(field: &syn::Field) -> syn::Result<Option<Expr>> {
    let mut count = None;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("gguf")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("count") {
                if count.is_some() {
                    return Err(meta.error("duplicate `count`"));
                }
                count = Some(meta.value()?.parse::<Expr>()?);
                Ok(())
            } else {
                let name = meta
                    .path
                    .get_ident()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                Err(meta.error(format!("unknown gguf attribute `{name}`, expected `count`")))
            }
        })?;
    }
    Ok(count)
}

const PRIMITIVES: [&str; 10] = [
    "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64",
];

fn is_primitive(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => {
            p.qself.is_none()
                && p.path
                    .get_ident()
                    .is_some_and(|i| PRIMITIVES.iter().any(|n| i == n))
        }
        Type::Array(a) => is_primitive(&a.elem),
        _ => false,
    }
}

fn vec_elem(ty: &Type) -> Option<Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Vec" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    }
}
