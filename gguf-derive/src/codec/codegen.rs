//! [`CodecStruct`] -> `BinRead` + `BinWrite` impls.

use proc_macro2::TokenStream;
use quote::quote;

use super::parse::{CodecField, CodecStruct, FieldKind};

pub fn generate(s: &CodecStruct) -> TokenStream {
    let name = &s.name;
    let (impl_generics, ty_generics, where_clause) = s.generics.split_for_impl();
    let reads = s.fields.iter().map(read_field);
    let writes = s.fields.iter().map(write_field);
    let names = s.fields.iter().map(|f| &f.name);
    let names_w = s.fields.iter().map(|f| &f.name);
    quote! {
        impl #impl_generics ::binrw::BinRead for #name #ty_generics #where_clause {
            type Args<'__a> = ::gguf_core::format::Ctx;

            fn read_options<R: ::std::io::Read + ::std::io::Seek>(
                reader: &mut R,
                _endian: ::binrw::Endian,
                ctx: Self::Args<'_>,
            ) -> ::binrw::BinResult<Self> {
                let endian: ::binrw::Endian = ctx.endian.into();
                #( #reads )*
                Ok(Self { #( #names ),* })
            }
        }

        impl #impl_generics ::binrw::BinWrite for #name #ty_generics #where_clause {
            type Args<'__a> = ::gguf_core::format::Ctx;

            fn write_options<W: ::std::io::Write + ::std::io::Seek>(
                &self,
                writer: &mut W,
                _endian: ::binrw::Endian,
                ctx: Self::Args<'_>,
            ) -> ::binrw::BinResult<()> {
                let endian: ::binrw::Endian = ctx.endian.into();
                let Self { #( #names_w ),* } = self;
                #( #writes )*
                Ok(())
            }
        }
    }
}

fn read_field(f: &CodecField) -> TokenStream {
    let (name, ty) = (&f.name, &f.ty);
    match &f.kind {
        FieldKind::Primitive => quote! {
            let #name = <#ty as ::binrw::BinRead>::read_options(reader, endian, ())?;
        },
        FieldKind::Contextual => quote! {
            let #name = <#ty as ::binrw::BinRead>::read_options(reader, endian, ctx)?;
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

fn write_field(f: &CodecField) -> TokenStream {
    let name = &f.name;
    match &f.kind {
        FieldKind::Primitive => quote! {
            ::binrw::BinWrite::write_options(#name, writer, endian, ())?;
        },
        FieldKind::Contextual => quote! {
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
