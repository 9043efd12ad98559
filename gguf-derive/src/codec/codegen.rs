//! [`CodecStruct`] -> `BinRead` + `BinWrite` impls.

use proc_macro2::TokenStream;
use quote::quote;

use super::parse::{CodecField, CodecStruct, FieldKind};

pub fn generate(s: &CodecStruct) -> TokenStream {
    let name = &s.name;
    let (impl_generics, ty_generics, _) = s.generics.split_for_impl();
    let read_where = where_clause(s, |f| match &f.kind {
        FieldKind::Contextual => Some(quote!(
            ::binrw::BinRead<Args<'__x> = ::gguf_core::format::Ctx>
        )),
        FieldKind::CountedBy { .. } => Some(quote!(
            ::binrw::BinRead<Args<'__x> = (::gguf_core::format::Ctx, u64)>
        )),
        _ => None,
    });
    let write_where = where_clause(s, |f| match &f.kind {
        FieldKind::Contextual | FieldKind::CountedBy { .. } => Some(quote!(
            ::binrw::BinWrite<Args<'__x> = ::gguf_core::format::Ctx>
        )),
        _ => None,
    });
    let reads = s.fields.iter().map(read_field);
    let writes = s.fields.iter().map(write_field);
    let names = s.fields.iter().map(|f| &f.name);
    let names_w = s.fields.iter().map(|f| &f.name);
    quote! {
        impl #impl_generics ::binrw::BinRead for #name #ty_generics #read_where {
            type Args<'__a> = ::gguf_core::format::Ctx;

            fn read_options<R: ::std::io::Read + ::std::io::Seek>(
                reader: &mut R,
                endian: ::binrw::Endian,
                ctx: Self::Args<'_>,
            ) -> ::binrw::BinResult<Self> {
                #( #reads )*
                Ok(Self { #( #names ),* })
            }
        }

        impl #impl_generics ::binrw::BinWrite for #name #ty_generics #write_where {
            type Args<'__a> = ::gguf_core::format::Ctx;

            fn write_options<W: ::std::io::Write + ::std::io::Seek>(
                &self,
                writer: &mut W,
                endian: ::binrw::Endian,
                ctx: Self::Args<'_>,
            ) -> ::binrw::BinResult<()> {
                let Self { #( #names_w ),* } = self;
                #( #writes )*
                Ok(())
            }
        }
    }
}

/// The struct's where clause plus, when it has type parameters, a bound
/// `FieldType: bound` for each field that needs one: a field of type `S`
/// reads only if `S` does (e.g. a string form that can only be written).
fn where_clause(
    s: &CodecStruct,
    bound: impl Fn(&CodecField) -> Option<TokenStream>,
) -> TokenStream {
    let own = s
        .generics
        .where_clause
        .as_ref()
        .map(|w| w.predicates.iter().map(|p| quote!(#p)).collect::<Vec<_>>())
        .unwrap_or_default();
    let fields: Vec<TokenStream> = if s.generics.type_params().next().is_some() {
        s.fields
            .iter()
            .filter_map(|f| {
                let ty = &f.ty;
                bound(f).map(|b| quote!(#ty: for<'__x> #b))
            })
            .collect()
    } else {
        Vec::new()
    };
    if own.is_empty() && fields.is_empty() {
        return TokenStream::new();
    }
    quote!(where #( #own, )* #( #fields, )*)
}

fn read_field(f: &CodecField) -> TokenStream {
    let (name, ty) = (&f.name, &f.ty);
    match &f.kind {
        // One read for a byte array, so a short input fails at the field's
        // start with the whole field missing, not at one of its bytes.
        FieldKind::Primitive if byte_array_len(ty).is_some() => {
            let len = byte_array_len(ty);
            quote! {
            let #name = {
                let mut bytes = [0u8; #len];
                ::std::io::Read::read_exact(reader, &mut bytes)?;
                bytes
            };
            }
        }
        FieldKind::Primitive => quote! {
            let #name = <#ty as ::binrw::BinRead>::read_options(reader, endian, ())?;
        },
        FieldKind::Contextual => quote! {
            let #name = <#ty as ::binrw::BinRead>::read_options(reader, endian, ctx)?;
        },
        FieldKind::CountedBy { count } => quote! {
            let #name = <#ty as ::binrw::BinRead>::read_options(reader, endian, (ctx, (#count) as u64))?;
        },
        FieldKind::Counted {
            elem,
            elem_primitive,
            count,
        } => {
            let args = if *elem_primitive {
                quote!(())
            } else {
                quote!(ctx)
            };
            quote! {
                // Elements are pushed one by one: a hostile count fails at
                // the end of the input instead of reserving memory up front.
                let #name = {
                    let count = (#count) as u64;
                    let mut items = ::std::vec::Vec::new();
                    for _ in 0..count {
                        items.push(<#elem as ::binrw::BinRead>::read_options(reader, endian, #args)?);
                    }
                    items
                };
            }
        }
    }
}

/// The length expression of a `[u8; N]` type.
fn byte_array_len(ty: &syn::Type) -> Option<&syn::Expr> {
    match ty {
        syn::Type::Array(a) if matches!(&*a.elem, syn::Type::Path(p) if p.path.is_ident("u8")) => {
            Some(&a.len)
        }
        _ => None,
    }
}

fn write_field(f: &CodecField) -> TokenStream {
    let name = &f.name;
    match &f.kind {
        FieldKind::Primitive => quote! {
            ::binrw::BinWrite::write_options(#name, writer, endian, ())?;
        },
        FieldKind::Contextual | FieldKind::CountedBy { .. } => quote! {
            ::binrw::BinWrite::write_options(#name, writer, endian, ctx)?;
        },
        FieldKind::Counted { elem_primitive, .. } => {
            let args = if *elem_primitive {
                quote!(())
            } else {
                quote!(ctx)
            };
            quote! {
                for item in #name.iter() {
                    ::binrw::BinWrite::write_options(item, writer, endian, #args)?;
                }
            }
        }
    }
}
