//! Input and `#[gguf(...)]` attributes -> [`MetaStruct`].

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Ident, LitStr, Type};

const PLACEHOLDER: &str = "{arch}";

/// A struct mapped to metadata entries, ready for code generation.
pub struct MetaStruct {
    pub name: Ident,
    pub generics: syn::Generics,
    /// Path of the `gguf_core` API (`::gguf_core` or `::gguf`).
    pub krate: syn::Path,
    pub fields: Vec<MetaFieldIr>,
}

/// One field: its full key template and whether it holds the architecture.
pub struct MetaFieldIr {
    pub name: Ident,
    pub ty: Type,
    /// The full key, possibly containing `{arch}`.
    pub key: String,
    pub is_arch: bool,
}

impl MetaStruct {
    /// True when some key needs `{arch}`.
    pub fn templated(&self) -> bool {
        self.fields.iter().any(|f| f.key.contains(PLACEHOLDER))
    }

    /// The field marked `#[gguf(arch)]`, if any.
    pub fn arch_field(&self) -> Option<&MetaFieldIr> {
        self.fields.iter().find(|f| f.is_arch)
    }
}

pub fn parse(input: &DeriveInput) -> syn::Result<MetaStruct> {
    const SHAPE: &str = "Metadata can only be derived for structs with named fields";
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(&input.ident, SHAPE));
    };
    let Fields::Named(named) = &data.fields else {
        return Err(syn::Error::new_spanned(&input.ident, SHAPE));
    };
    let attrs = struct_attrs(input)?;
    let mut fields = Vec::new();
    let mut arch_seen: Option<Span> = None;
    for field in &named.named {
        let name = field
            .ident
            .clone()
            .ok_or_else(|| syn::Error::new_spanned(field, "field without a name"))?;
        check_type(&field.ty)?;
        let fa = field_attrs(field)?;
        if let Some(span) = fa.arch {
            if arch_seen.is_some() {
                return Err(syn::Error::new(
                    span,
                    "only one field can be marked #[gguf(arch)]",
                ));
            }
            arch_seen = Some(span);
        }
        let key = match (fa.key, fa.rename) {
            (Some(key), None) => key.value(),
            (None, rename) => {
                let part = rename.map_or_else(|| unraw(&name), |r| r.value());
                match &attrs.prefix {
                    Some(prefix) => format!("{}.{part}", prefix.value()),
                    None => part,
                }
            }
            (Some(_), Some(rename)) => {
                return Err(syn::Error::new_spanned(
                    rename,
                    "`rename` and `key` cannot be combined: `key` is the full key",
                ))
            }
        };
        fields.push(MetaFieldIr {
            name,
            ty: field.ty.clone(),
            key,
            is_arch: fa.arch.is_some(),
        });
    }
    Ok(MetaStruct {
        name: input.ident.clone(),
        generics: input.generics.clone(),
        krate: attrs.krate.unwrap_or_else(default_crate),
        fields,
    })
}

struct StructAttrs {
    prefix: Option<LitStr>,
    krate: Option<syn::Path>,
}

fn struct_attrs(input: &DeriveInput) -> syn::Result<StructAttrs> {
    let mut out = StructAttrs {
        prefix: None,
        krate: None,
    };
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("gguf")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("prefix") {
                let lit: LitStr = meta.value()?.parse()?;
                check_template(&lit, "prefix")?;
                set_once(&mut out.prefix, lit, &meta, "prefix")
            } else if meta.path.is_ident("crate") {
                let lit: LitStr = meta.value()?.parse()?;
                let path = lit.parse::<syn::Path>()?;
                set_once(&mut out.krate, path, &meta, "crate")
            } else {
                Err(meta.error(format!(
                    "unknown gguf attribute `{}` on a struct, expected `prefix` or `crate`",
                    path_name(&meta.path)
                )))
            }
        })?;
    }
    Ok(out)
}

struct FieldAttrs {
    key: Option<LitStr>,
    rename: Option<LitStr>,
    arch: Option<Span>,
}

fn field_attrs(field: &syn::Field) -> syn::Result<FieldAttrs> {
    let mut out = FieldAttrs {
        key: None,
        rename: None,
        arch: None,
    };
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("gguf")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("key") {
                let lit: LitStr = meta.value()?.parse()?;
                check_template(&lit, "key")?;
                set_once(&mut out.key, lit, &meta, "key")
            } else if meta.path.is_ident("rename") {
                let lit: LitStr = meta.value()?.parse()?;
                check_template(&lit, "rename")?;
                set_once(&mut out.rename, lit, &meta, "rename")
            } else if meta.path.is_ident("arch") {
                set_once(&mut out.arch, meta.path.span(), &meta, "arch")
            } else {
                Err(meta.error(format!(
                    "unknown gguf attribute `{}` on a field, expected `key`, `rename` or `arch`",
                    path_name(&meta.path)
                )))
            }
        })?;
    }
    Ok(out)
}

fn set_once<T>(
    slot: &mut Option<T>,
    value: T,
    meta: &syn::meta::ParseNestedMeta<'_>,
    name: &str,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format!("duplicate `{name}`")));
    }
    *slot = Some(value);
    Ok(())
}

fn path_name(path: &syn::Path) -> String {
    path.get_ident()
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// A key part must be non-empty and may contain no placeholder but `{arch}`.
fn check_template(lit: &LitStr, what: &str) -> syn::Result<()> {
    let value = lit.value();
    if value.is_empty() {
        return Err(syn::Error::new_spanned(
            lit,
            format!("`{what}` must not be empty"),
        ));
    }
    let rest = value.replace(PLACEHOLDER, "");
    if rest.contains('{') || rest.contains('}') {
        return Err(syn::Error::new_spanned(
            lit,
            format!("`{what}` may only contain the placeholder `{{arch}}`"),
        ));
    }
    Ok(())
}

/// Rejects field types that can never be stored, with a hint; other
/// unsupported types fail on the `MetaField` bound.
fn check_type(ty: &Type) -> syn::Result<()> {
    let hint = match ty {
        Type::Reference(_) => "a borrowed field cannot be read from metadata: use an owned type such as String or Vec<T>",
        Type::Tuple(_) => "a tuple cannot be a metadata value: use a Vec<T> or a nested struct of its own",
        Type::Array(_) | Type::Slice(_) => "a fixed-size array cannot be a metadata value: use Vec<T>",
        _ => return Ok(()),
    };
    Err(syn::Error::new_spanned(ty, hint))
}

fn unraw(ident: &Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

/// The path of the crate that defines the metadata traits, found through
/// the user's `Cargo.toml` by `proc-macro-crate` (so a renamed dependency
/// works): `gguf-core` when it is a direct dependency (or the crate being
/// compiled), else the facade crate, else `::gguf`. `#[gguf(crate = "...")]`
/// overrides it.
fn default_crate() -> syn::Path {
    use proc_macro_crate::{crate_name, FoundCrate};
    let named = |name: &str| -> syn::Path {
        let ident = Ident::new(name, Span::call_site());
        syn::parse_quote!(::#ident)
    };
    match crate_name("gguf-core") {
        // Inside gguf-core (and its tests and doc tests), where
        // `extern crate self as gguf_core` makes the name resolve.
        Ok(FoundCrate::Itself) => named("gguf_core"),
        Ok(FoundCrate::Name(name)) => named(&name),
        Err(_) => match crate_name(FACADE_PACKAGE) {
            // `proc-macro-crate` answers with the dependency's key; a key
            // equal to the package name (`gguf-kit = "0.1"`) means the
            // library's own name, `gguf`; any other key is a rename.
            Ok(FoundCrate::Name(name)) if name != FACADE_PACKAGE.replace('-', "_") => named(&name),
            // The facade itself and anything we cannot see: its library
            // name, which `extern crate self as gguf` makes valid inside it.
            Ok(FoundCrate::Name(_) | FoundCrate::Itself) | Err(_) => named("gguf"),
        },
    }
}

/// The package name of the facade crate on crates.io (its library is
/// imported as `gguf`).
const FACADE_PACKAGE: &str = "gguf-kit";
