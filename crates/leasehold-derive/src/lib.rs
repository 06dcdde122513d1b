//! `#[derive(Read)]`: serde's `Deserialize` for leasehold-core's types, written as one plain
//! function of the type (`Value` in, the value or serde's message out) instead of serde's
//! visitor, field identifier and seeds for every struct and variant, which were most of the
//! wasm's reading code.
//!
//! It reads the `#[serde(...)]` attributes as serde's derive does, for the subset the core uses,
//! and refuses any other at compile time (never silently ignored):
//!
//! - a struct with named fields: on the struct `rename_all` and `deny_unknown_fields`; on a
//!   field `rename`, `default`, `skip`, `with` (its module's `deserialize`), and
//!   `skip_serializing_if` (serialization only);
//! - an internally tagged enum (`tag = "…"`, `rename_all` for the variants' names): unit
//!   variants, newtype variants (the inner type read from the object less its tag) and struct
//!   variants (`rename_all` and `rename` on a variant, fields as a struct's);
//! - an enum of unit variants, read from its name (`rename_all`, `rename`).
//!
//! The generated code calls `leasehold_core::wire::de::read` (the crate names itself
//! `leasehold_core`), where the rules and messages are, once; its tests hold them to serde's
//! derive.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::quote;
use syn::{parse_macro_input, Attribute, Data, DeriveInput, Fields, LitStr, Type};

#[proc_macro_derive(Read, attributes(serde))]
pub fn derive_read(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// serde's `rename_all` rules, for field names (snake_case in Rust) and variant names
/// (PascalCase in Rust).
#[derive(Clone, Copy)]
enum Case {
    Same,
    Camel,
    Kebab,
    Lower,
    Snake,
}

impl Case {
    fn parse(s: &LitStr) -> syn::Result<Case> {
        Ok(match s.value().as_str() {
            "camelCase" => Case::Camel,
            "kebab-case" => Case::Kebab,
            "lowercase" => Case::Lower,
            "snake_case" => Case::Snake,
            other => {
                return Err(syn::Error::new_spanned(
                    s,
                    format!("rename_all = {other:?} is not read by Read"),
                ))
            }
        })
    }

    /// serde's `apply_to_field`: the field is snake_case in Rust.
    fn field(self, name: &str) -> String {
        match self {
            Case::Same | Case::Snake | Case::Lower => name.to_string(),
            Case::Kebab => name.replace('_', "-"),
            Case::Camel => {
                let mut pascal = String::new();
                let mut capitalize = true;
                for c in name.chars() {
                    if c == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.push(c.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(c);
                    }
                }
                lower_first(&pascal)
            }
        }
    }

    /// serde's `apply_to_variant`: the variant is PascalCase in Rust.
    fn variant(self, name: &str) -> String {
        let snake = || {
            let mut out = String::new();
            for (i, c) in name.char_indices() {
                if i > 0 && c.is_uppercase() {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
            }
            out
        };
        match self {
            Case::Same => name.to_string(),
            Case::Lower => name.to_ascii_lowercase(),
            Case::Camel => lower_first(name),
            Case::Snake => snake(),
            Case::Kebab => snake().replace('_', "-"),
        }
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or_else(String::new, |f| {
        f.to_ascii_lowercase().to_string() + c.as_str()
    })
}

/// A Rust name as serde spells it: without a raw identifier's `r#`.
fn unraw(ident: &syn::Ident) -> String {
    let name = ident.to_string();
    name.strip_prefix("r#").map_or(name.clone(), str::to_string)
}

struct Field {
    ident: syn::Ident,
    ty: Type,
    json: String,
    default: bool,
    skip: bool,
    with: Option<syn::Path>,
}

/// The `#[serde(...)]` attributes among `attrs`, each key handed to `each`.
fn serde_attrs(
    attrs: &[Attribute],
    mut each: impl FnMut(&syn::meta::ParseNestedMeta) -> syn::Result<()>,
) -> syn::Result<()> {
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| each(&meta))?;
    }
    Ok(())
}

fn refused(meta: &syn::meta::ParseNestedMeta) -> syn::Error {
    meta.error("an attribute Read does not read")
}

fn fields_of(named: &syn::FieldsNamed, case: Case) -> syn::Result<Vec<Field>> {
    let mut fields = Vec::new();
    for f in &named.named {
        let ident = f.ident.clone().expect("named");
        let mut field = Field {
            json: case.field(&unraw(&ident)),
            ident,
            ty: f.ty.clone(),
            default: false,
            skip: false,
            with: None,
        };
        serde_attrs(&f.attrs, |meta| {
            if meta.path.is_ident("rename") {
                field.json = meta.value()?.parse::<LitStr>()?.value();
            } else if meta.path.is_ident("default") {
                if meta.input.peek(syn::Token![=]) {
                    return Err(meta.error("default = \"path\" is not read by Read"));
                }
                field.default = true;
            } else if meta.path.is_ident("skip") {
                field.skip = true;
            } else if meta.path.is_ident("with") {
                let s: LitStr = meta.value()?.parse()?;
                field.with = Some(s.parse()?);
            } else if meta.path.is_ident("skip_serializing_if") {
                let _: LitStr = meta.value()?.parse()?;
            } else {
                return Err(refused(meta));
            }
            Ok(())
        })?;
        fields.push(field);
    }
    Ok(fields)
}

/// Reads `fields` out of `__object` (a `read::Object`) and makes `constructor { … }`: every slot
/// taken in the order of the JSON names (a `Value`'s map is sorted, and serde's derive reads
/// them in that order), then `finish` says why not, in serde's order, else the value.
fn build(fields: &[Field], deny: bool, constructor: Tokens) -> Tokens {
    let mut order: Vec<&Field> = fields.iter().filter(|f| !f.skip).collect();
    order.sort_by(|a, b| a.json.cmp(&b.json));
    let slot = |f: &Field| {
        let name = f.ident.to_string();
        syn::Ident::new(
            &format!("__slot_{}", name.trim_start_matches("r#")),
            Span::call_site(),
        )
    };
    let takes = order.iter().map(|f| {
        let (json, ty, s) = (&f.json, &f.ty, slot(f));
        match &f.with {
            Some(path) => quote!(let #s: ::core::option::Option<#ty> = __object.take_with(#json, #path::deserialize);),
            None => quote!(let #s: ::core::option::Option<#ty> = __object.take(#json);),
        }
    });
    // serde's message lists the fields in the order they are declared.
    let known: Vec<&String> = fields.iter().filter(|f| !f.skip).map(|f| &f.json).collect();
    // Required: no default, and not an `Option` read by its own type (a missing one is `None`,
    // as serde's derive reads it; one read `with` a module is required).
    let required: Vec<&Field> = fields
        .iter()
        .filter(|f| !f.skip && !f.default && (f.with.is_some() || !is_option(&f.ty)))
        .collect();
    let required_names: Vec<&String> = required.iter().map(|f| &f.json).collect();
    let present = required.iter().map(|f| {
        let s = slot(f);
        quote!(#s.is_some())
    });
    let inits = fields.iter().map(|f| {
        let (ident, s) = (&f.ident, slot(f));
        let value = if f.skip {
            quote!(::core::default::Default::default())
        } else if f.default {
            quote!(#s.unwrap_or_default())
        } else if is_option(&f.ty) && f.with.is_none() {
            quote!(#s.flatten())
        } else {
            quote!(#s.expect("present: checked by finish"))
        };
        quote!(#ident: #value)
    });
    quote! {
        #(#takes)*
        __object.finish(#deny, &[#(#known),*], &[#(#present),*], &[#(#required_names),*])?;
        ::core::result::Result::Ok(#constructor { #(#inits),* })
    }
}

fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "Read takes no generics",
        ));
    }
    let mut case = Case::Same;
    let mut deny = false;
    let mut tag: Option<String> = None;
    serde_attrs(&input.attrs, |meta| {
        if meta.path.is_ident("rename_all") {
            case = Case::parse(&meta.value()?.parse()?)?;
        } else if meta.path.is_ident("deny_unknown_fields") {
            deny = true;
        } else if meta.path.is_ident("tag") {
            tag = Some(meta.value()?.parse::<LitStr>()?.value());
        } else {
            return Err(refused(meta));
        }
        Ok(())
    })?;
    let name = &input.ident;
    let read = quote!(::leasehold_core::wire::de::read);
    let body = match (&input.data, &tag) {
        (Data::Struct(data), None) => {
            let Fields::Named(named) = &data.fields else {
                return Err(syn::Error::new_spanned(
                    name,
                    "Read is for structs with named fields",
                ));
            };
            let expecting = format!("struct {name}");
            let build = build(&fields_of(named, case)?, deny, quote!(#name));
            quote! {
                let mut __object = #read::Object::open(value, #expecting);
                #build
            }
        }
        (Data::Enum(data), Some(tag)) => {
            if deny {
                return Err(syn::Error::new_spanned(
                    name,
                    "deny_unknown_fields on an enum is not read by Read",
                ));
            }
            let expecting = format!("internally tagged enum {name}");
            let mut names = Vec::new();
            let mut arms = Vec::new();
            for (i, v) in data.variants.iter().enumerate() {
                let (json, fields_case) = variant_attrs(v, case, true)?;
                names.push(json);
                let ident = &v.ident;
                let arm = match &v.fields {
                    // As serde's internally tagged unit variant: other fields are ignored.
                    Fields::Unit => quote!(#i => ::core::result::Result::Ok(#name::#ident),),
                    Fields::Unnamed(one) if one.unnamed.len() == 1 => {
                        serde_attrs(&one.unnamed[0].attrs, |meta| Err(refused(meta)))?;
                        quote!(#i => __object.rest().map(#name::#ident),)
                    }
                    Fields::Unnamed(_) => {
                        return Err(syn::Error::new_spanned(
                            ident,
                            "a tuple variant is not read by Read",
                        ))
                    }
                    Fields::Named(named) => {
                        let build = build(
                            &fields_of(named, fields_case)?,
                            false,
                            quote!(#name::#ident),
                        );
                        quote!(#i => { #build })
                    }
                };
                arms.push(arm);
            }
            quote! {
                let (__variant, mut __object) =
                    #read::Object::tagged(value, #expecting, #tag, &[#(#names),*])?;
                match __variant {
                    #(#arms)*
                    _ => ::core::unreachable!("tagged returns the index of a variant"),
                }
            }
        }
        (Data::Enum(data), None) => {
            let mut names = Vec::new();
            let mut arms = Vec::new();
            for (i, v) in data.variants.iter().enumerate() {
                if !matches!(v.fields, Fields::Unit) {
                    return Err(syn::Error::new_spanned(
                        &v.ident,
                        "Read reads an enum of unit variants, or an internally tagged one",
                    ));
                }
                names.push(variant_attrs(v, case, false)?.0);
                let ident = &v.ident;
                arms.push(quote!(#i => #name::#ident,));
            }
            quote! {
                ::core::result::Result::Ok(match #read::unit_variant(value, &[#(#names),*])? {
                    #(#arms)*
                    _ => ::core::unreachable!("unit_variant returns the index of a variant"),
                })
            }
        }
        (Data::Struct(_), Some(_)) | (Data::Union(_), _) => {
            return Err(syn::Error::new_spanned(
                name,
                "Read reads a struct, an enum of unit variants or an internally tagged enum",
            ))
        }
    };
    Ok(quote! {
        impl<'de> ::serde::Deserialize<'de> for #name {
            fn deserialize<__D: ::serde::Deserializer<'de>>(d: __D) -> ::core::result::Result<Self, __D::Error> {
                let value = <::serde_json::Value as ::serde::Deserialize>::deserialize(d)?;
                Self::read_value(value).map_err(<__D::Error as ::serde::de::Error>::custom)
            }
        }

        impl #name {
            /// The value out of a `Value`, with serde's messages (`#[derive(Read)]`).
            #[inline(never)]
            fn read_value(value: ::serde_json::Value) -> ::core::result::Result<Self, ::serde_json::Error> {
                #body
            }
        }
    })
}

/// A variant's name as JSON spells it (`rename`, else the enum's `rename_all`) and the case of
/// its fields' names (`rename_all` on the variant, where `fields` says it has fields).
fn variant_attrs(v: &syn::Variant, case: Case, fields: bool) -> syn::Result<(String, Case)> {
    let mut json = case.variant(&unraw(&v.ident));
    let mut fields_case = Case::Same;
    serde_attrs(&v.attrs, |meta| {
        if meta.path.is_ident("rename") {
            json = meta.value()?.parse::<LitStr>()?.value();
        } else if fields && meta.path.is_ident("rename_all") {
            fields_case = Case::parse(&meta.value()?.parse()?)?;
        } else {
            return Err(refused(meta));
        }
        Ok(())
    })?;
    Ok((json, fields_case))
}

/// Whether a field's type is written `Option<…>`: a missing one is `None`, as serde's derive
/// reads it. (serde decides by the type, so an alias of `Option` would be optional there and
/// required here; the core has none.)
fn is_option(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => {
            p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "Option")
        }
        _ => false,
    }
}
