//! [`MetaStruct`] -> `FromMetadata` + `ToMetadata` impls.

use proc_macro2::TokenStream;
use quote::quote;

use super::parse::MetaStruct;

pub fn generate(s: &MetaStruct) -> TokenStream {
    let name = &s.name;
    let krate = &s.krate;
    let (impl_generics, ty_generics, where_clause) = s.generics.split_for_impl();
    let meta = quote!(#krate::metadata);

    let from_gguf = if s.templated() {
        quote! {
            let arch = #krate::Gguf::get_str(file, #krate::format::ARCH_KEY)?;
            <Self as #krate::FromMetadata>::from_gguf_arch(file, arch)
        }
    } else {
        quote! { <Self as #krate::FromMetadata>::from_gguf_arch(file, "") }
    };

    let reads = s.fields.iter().map(|f| {
        let (field, ty, key) = (&f.name, &f.ty, &f.key);
        quote! {
            #field: <#ty as #meta::MetaField>::read(
                file,
                &#meta::resolve_key(#key, ::core::option::Option::Some(arch))?,
            )?,
        }
    });

    let arch = match s.arch_field() {
        Some(f) => {
            let (field, ty) = (&f.name, &f.ty);
            quote! {
                let arch = <#ty as #meta::ArchField>::arch(&self.#field).or(arch);
            }
        }
        None => quote!(),
    };
    let writes = s.fields.iter().map(|f| {
        let (field, ty, key) = (&f.name, &f.ty, &f.key);
        quote! {
            let key = #meta::resolve_key(#key, arch)?;
            if let ::core::option::Option::Some(value) = <#ty as #meta::MetaField>::write(&self.#field) {
                entries.push((key, value));
            }
        }
    });
    let n = s.fields.len();

    quote! {
        impl #impl_generics #krate::FromMetadata for #name #ty_generics #where_clause {
            fn from_gguf(file: &(impl #krate::Gguf + ?Sized)) -> #krate::Result<Self> {
                #from_gguf
            }

            fn from_gguf_arch(file: &(impl #krate::Gguf + ?Sized), arch: &str) -> #krate::Result<Self> {
                let _ = (file, arch);
                ::core::result::Result::Ok(Self { #( #reads )* })
            }
        }

        impl #impl_generics #krate::ToMetadata for #name #ty_generics #where_clause {
            fn to_metadata(
                &self,
                arch: ::core::option::Option<&str>,
            ) -> #krate::Result<::std::vec::Vec<(::std::string::String, #krate::format::OwnedValue)>> {
                let _ = arch;
                #arch
                let mut entries = ::std::vec::Vec::with_capacity(#n);
                #( #writes )*
                ::core::result::Result::Ok(entries)
            }
        }
    }
}
