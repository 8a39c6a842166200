//! `#[vk_layer::hooks]`: put on `impl InstanceHooks for T` or `impl DeviceHooks for T`, it lists
//! the commands whose hook methods the block implements and declares them as `T`'s hooked
//! commands (`vk_layer::InstanceHooked` / `vk_layer::DeviceHooked`). A hook method written is a
//! hook installed: the list cannot be forgotten or disagree with the code.
//!
//! `#[vk_layer::hooks(intercept(cmd_a, cmd_b))]` also routes commands without hook methods through
//! the layer (a handle-wrapping layer's unwrapping); `intercept(cmd_*)` every hookable command of
//! the level whose hook-method suffix starts with `cmd_` (a family: `cmd_*`, `queue_*`,
//! `get_physical_device_*`), `intercept(*)` every one of the level. A family that names no command
//! fails to compile.
//!
//! Method names map to command ids through the generated `vk_layer::instance_hook_ids` /
//! `device_hook_ids` constants, so a name that is no hook of that level fails to compile.

#![warn(missing_docs)]

use proc_macro::{Delimiter, Group, Ident, Punct, Spacing, Span, TokenStream, TokenTree};

/// The prefixes of hook methods; what follows is the command's snake-case name.
const PREFIXES: [&str; 4] = [
    "pre_call_validate_",
    "pre_call_record_",
    "call_down_",
    "post_call_record_",
];

/// See the crate documentation.
#[proc_macro_attribute]
pub fn hooks(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr, item.clone()) {
        Ok(extra) => item.into_iter().chain(extra).collect(),
        Err((span, message)) => item
            .into_iter()
            .chain(compile_error(span, &message))
            .collect(),
    }
}

type Error = (Span, String);

fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream, Error> {
    let tokens: Vec<TokenTree> = item.into_iter().collect();
    let body_at = tokens
        .iter()
        .rposition(|t| matches!(t, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace))
        .ok_or_else(|| {
            (
                Span::call_site(),
                "#[vk_layer::hooks] goes on an `impl ... Hooks for T { }` block".into(),
            )
        })?;
    let TokenTree::Group(body) = &tokens[body_at] else {
        unreachable!()
    };
    let header = &tokens[..body_at];
    let (generics, trait_at, for_at) = split_header(header)?;
    let (level, hooked) =
        match last_ident(&header[trait_at..for_at]).as_deref() {
            Some("InstanceHooks") => ("instance_hook_ids", "InstanceHooked"),
            Some("DeviceHooks") => ("device_hook_ids", "DeviceHooked"),
            _ => return Err((
                header
                    .get(trait_at)
                    .map_or(Span::call_site(), TokenTree::span),
                "#[vk_layer::hooks] goes on `impl InstanceHooks for T` or `impl DeviceHooks for T`"
                    .into(),
            )),
        };
    let mut commands: Vec<(String, Span)> = Vec::new();
    for (name, span) in method_names(body) {
        let Some(command) = PREFIXES.iter().find_map(|p| name.strip_prefix(p)) else {
            return Err((span, format!("`{name}` is not a hook method (pre_call_validate_*, pre_call_record_*, call_down_*, post_call_record_*)")));
        };
        push_unique(&mut commands, command.to_string(), span);
    }
    let (listed, families) = intercepted(attr)?;
    for (name, span) in listed {
        push_unique(&mut commands, name, span);
    }
    Ok(implementation(
        header, generics, for_at, level, hooked, &commands, &families,
    ))
}

/// (the generics' tokens after `impl`, where the trait path starts, where `for` is).
fn split_header(header: &[TokenTree]) -> Result<(std::ops::Range<usize>, usize, usize), Error> {
    let impl_at = header
        .iter()
        .position(|t| matches!(t, TokenTree::Ident(i) if i.to_string() == "impl"))
        .ok_or_else(|| {
            (
                Span::call_site(),
                "#[vk_layer::hooks] goes on an `impl` block".into(),
            )
        })?;
    let mut at = impl_at + 1;
    let generics_start = at;
    if matches!(header.get(at), Some(TokenTree::Punct(p)) if p.as_char() == '<') {
        let mut depth = 0i32;
        while let Some(t) = header.get(at) {
            if let TokenTree::Punct(p) = t {
                match p.as_char() {
                    '<' => depth += 1,
                    '>' => depth -= 1,
                    _ => {}
                }
            }
            at += 1;
            if depth == 0 {
                break;
            }
        }
    }
    let generics = generics_start..at;
    let for_at = header[at..]
        .iter()
        .position(|t| matches!(t, TokenTree::Ident(i) if i.to_string() == "for"))
        .map(|p| p + at)
        .ok_or_else(|| {
            (
                Span::call_site(),
                "#[vk_layer::hooks] needs `impl Trait for Type`".into(),
            )
        })?;
    Ok((generics, at, for_at))
}

fn last_ident(tokens: &[TokenTree]) -> Option<String> {
    tokens.iter().rev().find_map(|t| match t {
        TokenTree::Ident(i) => Some(i.to_string()),
        _ => None,
    })
}

/// The names of the `fn` items directly in the block.
fn method_names(body: &Group) -> Vec<(String, Span)> {
    let tokens: Vec<TokenTree> = body.stream().into_iter().collect();
    tokens
        .windows(2)
        .filter_map(|pair| match pair {
            [TokenTree::Ident(f), TokenTree::Ident(name)] if f.to_string() == "fn" => {
                Some((name.to_string(), name.span()))
            }
            _ => None,
        })
        .collect()
}

/// The commands `intercept(...)` lists (with their spans) and its families' prefixes.
type Intercepted = (Vec<(String, Span)>, Vec<String>);

/// The names in `intercept(a, b, ...)`, the attribute's one optional argument, and its families
/// (`prefix*`; `*` and `all` are the empty prefix).
fn intercepted(attr: TokenStream) -> Result<Intercepted, Error> {
    let tokens: Vec<TokenTree> = attr.into_iter().collect();
    let group = match tokens.as_slice() {
        [] => return Ok((Vec::new(), Vec::new())),
        [TokenTree::Ident(i), TokenTree::Group(g)]
            if i.to_string() == "intercept" && g.delimiter() == Delimiter::Parenthesis =>
        {
            g
        }
        _ => {
            return Err((
                tokens[0].span(),
                "the only argument is `intercept(command, family_*, ...)`".into(),
            ))
        }
    };
    let (mut listed, mut families) = (Vec::new(), Vec::new());
    let items: Vec<TokenTree> = group.stream().into_iter().collect();
    for item in items.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ',')) {
        match item {
            [] => {}
            [TokenTree::Ident(all)] if all.to_string() == "all" => families.push(String::new()),
            [TokenTree::Ident(name)] => listed.push((name.to_string(), name.span())),
            [TokenTree::Punct(star)] if star.as_char() == '*' => families.push(String::new()),
            [TokenTree::Ident(prefix), TokenTree::Punct(star)] if star.as_char() == '*' => {
                families.push(prefix.to_string())
            }
            [first, ..] => {
                return Err((
                    first.span(),
                    "intercept(...) lists commands as `cmd_draw`, `enumerate_physical_devices`, \
                     families as `cmd_*`, every command as `*`"
                        .into(),
                ))
            }
        }
    }
    Ok((listed, families))
}

fn push_unique(commands: &mut Vec<(String, Span)>, name: String, span: Span) {
    if !commands.iter().any(|(n, _)| *n == name) {
        commands.push((name, span));
    }
}

/// `unsafe impl<generics> ::vk_layer::<hooked> for Type { const COMMANDS: &'static [u16] = &[...]; }`
fn implementation(
    header: &[TokenTree],
    generics: std::ops::Range<usize>,
    for_at: usize,
    level: &str,
    hooked: &str,
    commands: &[(String, Span)],
    families: &[String],
) -> TokenStream {
    let mut out: Vec<TokenTree> = vec![ident("unsafe"), ident("impl")];
    out.extend(header[generics].iter().cloned());
    out.extend(path(&["vk_layer", hooked]));
    // `for Type where ...`
    out.extend(header[for_at..].iter().cloned());
    let mut ids: Vec<TokenTree> = Vec::new();
    for (name, span) in commands {
        ids.extend(path(&["vk_layer", level]));
        ids.push(punct(':', Spacing::Joint));
        ids.push(punct(':', Spacing::Alone));
        ids.push(TokenTree::Ident(Ident::new(name, *span)));
        ids.push(punct(',', Spacing::Alone));
    }
    let mut item: Vec<TokenTree> = vec![
        ident("const"),
        ident("COMMANDS"),
        punct(':', Spacing::Alone),
    ];
    item.push(punct('&', Spacing::Joint));
    item.push(TokenTree::Punct(Punct::new('\'', Spacing::Joint)));
    item.push(ident("static"));
    item.push(TokenTree::Group(Group::new(
        Delimiter::Bracket,
        ident("u16").into(),
    )));
    item.push(punct('=', Spacing::Alone));
    let ids = TokenTree::Group(Group::new(Delimiter::Bracket, ids.into_iter().collect()));
    if families.is_empty() {
        item.push(punct('&', Spacing::Alone));
        item.push(ids);
    } else {
        // The hookable commands of the level, filtered at compile time.
        let (all, names) = match level {
            "instance_hook_ids" => ("INSTANCE_HOOKABLE", "INSTANCE_HOOK_NAMES"),
            _ => ("DEVICE_HOOKABLE", "DEVICE_HOOK_NAMES"),
        };
        let families: Vec<String> = families.iter().map(|f| format!("{f:?}")).collect();
        let mut block: Vec<TokenTree> = parse("const LISTED: &[u16] = &");
        block.push(ids);
        block.extend(parse(&format!(
            "; const FAMILIES: &[&str] = &[{families}]; \
             const N: usize = ::vk_layer::selected_hooks_len(::vk_layer::{all}, ::vk_layer::{names}, LISTED, FAMILIES); \
             const IDS: [u16; N] = ::vk_layer::selected_hooks::<N>(::vk_layer::{all}, ::vk_layer::{names}, LISTED, FAMILIES); \
             &IDS",
            families = families.join(", "),
        )));
        item.push(TokenTree::Group(Group::new(
            Delimiter::Brace,
            block.into_iter().collect(),
        )));
    }
    item.push(punct(';', Spacing::Alone));
    out.push(TokenTree::Group(Group::new(
        Delimiter::Brace,
        item.into_iter().collect(),
    )));
    out.into_iter().collect()
}

/// Tokens of fixed text (balanced, written here).
fn parse(text: &str) -> Vec<TokenTree> {
    text.parse::<TokenStream>()
        .expect("the macro's own tokens")
        .into_iter()
        .collect()
}

fn ident(name: &str) -> TokenTree {
    TokenTree::Ident(Ident::new(name, Span::call_site()))
}

fn punct(c: char, spacing: Spacing) -> TokenTree {
    TokenTree::Punct(Punct::new(c, spacing))
}

/// `::a::b`.
fn path(segments: &[&str]) -> Vec<TokenTree> {
    segments
        .iter()
        .flat_map(|s| {
            [
                punct(':', Spacing::Joint),
                punct(':', Spacing::Alone),
                ident(s),
            ]
        })
        .collect()
}

fn compile_error(span: Span, message: &str) -> TokenStream {
    let mut literal = proc_macro::Literal::string(message);
    literal.set_span(span);
    let group = Group::new(Delimiter::Parenthesis, TokenTree::Literal(literal).into());
    let mut bang = Punct::new('!', Spacing::Alone);
    bang.set_span(span);
    let mut call: Vec<TokenTree> = vec![
        TokenTree::Ident(Ident::new("compile_error", span)),
        bang.into(),
    ];
    call.push(TokenTree::Group(group));
    call.push(punct(';', Spacing::Alone));
    call.into_iter().collect()
}

// The README's example compiles and runs as a doctest (with vk-layer, a dev-dependency).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
