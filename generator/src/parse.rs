//! Registry XML -> IR. The `api` filter is applied here, once: nothing past this module sees an
//! element that does not belong to the `vulkan` API.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use roxmltree::{Document, Node};

use crate::depends;
use crate::ir::*;

/// A registry the generator cannot make sense of: the file, line, element and what was wrong.
#[derive(Debug, Clone)]
pub struct ParseError {
    pub file: String,
    pub line: u32,
    pub element: String,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: <{}>: {}", self.file, self.line, self.element, self.message)
    }
}

impl std::error::Error for ParseError {}

type Result<T> = std::result::Result<T, ParseError>;

/// The API values the registry is known to use; anything else is an unexpected registry.
const KNOWN_APIS: &[&str] = &["vulkan", "vulkansc", "vulkanbase"];
const OUR_API: &str = "vulkan";

/// Parses `vk.xml` (and `video.xml` for the video codec types it references) into the IR.
pub fn parse(vk_xml: &str, video_xml: Option<&str>) -> Result<Registry> {
    let mut reg = Registry::default();
    if let Some(video) = video_xml {
        let doc = parse_doc("video.xml", video)?;
        Parser { file: "video.xml", doc: &doc, reg: &mut reg }.run(false)?;
    }
    let doc = parse_doc("vk.xml", vk_xml)?;
    Parser { file: "vk.xml", doc: &doc, reg: &mut reg }.run(true)?;
    finish(&mut reg);
    Ok(reg)
}

fn parse_doc<'a>(file: &str, text: &'a str) -> Result<Document<'a>> {
    let options = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    Document::parse_with_options(text, options).map_err(|e| ParseError {
        file: file.into(),
        line: e.pos().row,
        element: "registry".into(),
        message: format!("not well-formed XML: {e}"),
    })
}

struct Parser<'a, 'input> {
    file: &'a str,
    doc: &'a Document<'input>,
    reg: &'a mut Registry,
}

impl Parser<'_, '_> {
    fn err<T>(&self, node: Node, message: impl Into<String>) -> Result<T> {
        let pos = self.doc.text_pos_at(node.range().start);
        let mut element = node.tag_name().name().to_string();
        if let Some(name) = node.attribute("name").or_else(|| child_text(node, "name")) {
            element = format!("{element} name=\"{name}\"");
        }
        Err(ParseError { file: self.file.into(), line: pos.row, element, message: message.into() })
    }

    fn attr<'n>(&self, node: Node<'n, '_>, name: &str) -> Result<&'n str> {
        match node.attribute(name) {
            Some(v) => Ok(v),
            None => self.err(node, format!("missing attribute `{name}`")),
        }
    }

    /// Whether an element with an optional `api="a,b"` attribute belongs to our API.
    fn for_our_api(&self, node: Node, attr: &str) -> Result<bool> {
        let Some(list) = node.attribute(attr) else { return Ok(true) };
        let mut ours = false;
        for api in list.split(',') {
            if api == OUR_API {
                ours = true;
            } else if !(KNOWN_APIS.contains(&api) || attr == "supported" && api == "disabled") {
                return self.err(node, format!("unknown api value `{api}` in `{attr}`"));
            }
        }
        Ok(ours)
    }

    fn run(&mut self, is_vk: bool) -> Result<()> {
        let root = self.doc.root_element();
        for section in root.children().filter(Node::is_element) {
            match section.tag_name().name() {
                "types" => self.types(section)?,
                "enums" => self.enums(section)?,
                "commands" => self.commands(section)?,
                "feature" => self.feature(section)?,
                "extensions" => self.extensions(section, is_vk)?,
                "tags" => {
                    for tag in section.children().filter(|n| n.has_tag_name("tag")) {
                        self.reg.tags.push(self.attr(tag, "name")?.to_string());
                    }
                }
                "platforms" | "comment" | "formats" | "spirvextensions" | "spirvcapabilities"
                | "sync" | "videocodecs" | "dynamicstates" => {}
                other => return self.err(section, format!("unknown registry section `{other}`")),
            }
        }
        Ok(())
    }

    // ---- types -------------------------------------------------------------------------------

    fn types(&mut self, section: Node) -> Result<()> {
        for node in section.children().filter(|n| n.has_tag_name("type")) {
            if !self.for_our_api(node, "api")? {
                continue;
            }
            let proto = node.children().find(|n| n.has_tag_name("proto"));
            let name = node
                .attribute("name")
                .or_else(|| child_text(node, "name"))
                .or_else(|| proto.and_then(|p| child_text(p, "name")));
            let Some(name) = name else {
                return self.err(node, "type without a name");
            };
            if !is_identifier(name) && node.attribute("category") != Some("include") {
                return self.err(node, format!("type name `{name}` is not a C identifier"));
            }
            let def = if let Some(target) = node.attribute("alias") {
                Some(TypeDef::Alias(target.to_string()))
            } else {
                self.type_def(node, name)?
            };
            let Some(def) = def else { continue };
            // video.xml is read first: its real definitions win over vk.xml's header placeholders.
            if matches!(def, TypeDef::Platform { .. }) && self.reg.types.contains_key(name) {
                continue;
            }
            self.reg.types.insert(name.to_string(), def);
        }
        Ok(())
    }

    fn type_def(&mut self, node: Node, name: &str) -> Result<Option<TypeDef>> {
        let def = match node.attribute("category") {
            None => match node.attribute("requires") {
                Some("vk_platform") | Some("stdint") => TypeDef::Builtin,
                Some(header) => TypeDef::Platform { header: header.to_string() },
                None if is_c_builtin(name) => TypeDef::Builtin,
                None => return self.err(node, "type without category or requires"),
            },
            Some("include") => return Ok(None),
            Some("define") => {
                self.define(node, name)?;
                return Ok(None);
            }
            Some("basetype") => TypeDef::Base { underlying: self.base_type(node)? },
            Some("handle") => self.handle(node)?,
            Some("enum") => TypeDef::Enum,
            Some("bitmask") => {
                let width = match child_text(node, "type") {
                    Some("VkFlags") => 32,
                    Some("VkFlags64") => 64,
                    other => return self.err(node, format!("bitmask over unknown type {other:?}")),
                };
                let bits = node.attribute("bitvalues").or(node.attribute("requires"));
                TypeDef::Bitmask { width, bits: bits.map(str::to_string) }
            }
            Some("struct") => TypeDef::Struct(self.aggregate(node)?),
            Some("union") => TypeDef::Union(self.aggregate(node)?),
            Some("funcpointer") => TypeDef::FuncPointer(self.funcpointer(node)?),
            Some(other) => return self.err(node, format!("unknown type category `{other}`")),
        };
        Ok(Some(def))
    }

    fn define(&mut self, node: Node, name: &str) -> Result<()> {
        let text = decl_text(node);
        match name {
            "VK_HEADER_VERSION" => {
                let number = text.split_whitespace().last().and_then(|n| n.parse().ok());
                match number {
                    Some(n) => self.reg.header_version = n,
                    None => return self.err(node, format!("cannot read the version from `{text}`")),
                }
            }
            "VK_HEADER_VERSION_COMPLETE" => {
                // `... VK_MAKE_API_VERSION(0, 1, 4, VK_HEADER_VERSION)`
                let args: Vec<&str> = text
                    .split_once('(')
                    .and_then(|(_, rest)| rest.split_once(')'))
                    .map(|(args, _)| args.split(',').map(str::trim).collect())
                    .unwrap_or_default();
                match (args.get(1).and_then(|v| v.parse().ok()), args.get(2).and_then(|v| v.parse().ok())) {
                    (Some(major), Some(minor)) => self.reg.header_api = (major, minor),
                    _ => return self.err(node, format!("cannot read the version from `{text}`")),
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn base_type(&self, node: Node) -> Result<Option<CType>> {
        if child_text(node, "type").is_some() {
            let field = self.field(node)?;
            return Ok(Some(field.ty));
        }
        // No C type inside: an opaque struct (`struct ANativeWindow;`) or an opaque pointer
        // (`typedef struct __IOSurface* IOSurfaceRef;`, the non-ObjC branch of `MTLDevice_id`).
        let before_name: String = node
            .children()
            .take_while(|n| !n.has_tag_name("name"))
            .filter_map(|n| n.text())
            .collect();
        let last_line = before_name.lines().last().unwrap_or("");
        if last_line.contains('*') {
            Ok(Some(CType { base: "void".into(), pointers: vec![false] }))
        } else {
            Ok(None)
        }
    }

    fn handle(&self, node: Node) -> Result<TypeDef> {
        let dispatchable = match child_text(node, "type") {
            Some("VK_DEFINE_HANDLE") => true,
            Some("VK_DEFINE_NON_DISPATCHABLE_HANDLE") => false,
            other => return self.err(node, format!("unknown handle macro {other:?}")),
        };
        let parents = node
            .attribute("parent")
            .map(|p| p.split(',').map(str::to_string).collect())
            .unwrap_or_default();
        let object_type = node.attribute("objtypeenum").map(str::to_string);
        Ok(TypeDef::Handle { dispatchable, parents, object_type })
    }

    fn aggregate(&self, node: Node) -> Result<Aggregate> {
        let mut members = Vec::new();
        for member in node.children().filter(|n| n.has_tag_name("member")) {
            if self.for_our_api(member, "api")? {
                members.push(self.field(member)?);
            }
        }
        if members.is_empty() {
            return self.err(node, "struct or union without members");
        }
        let struct_extends = node
            .attribute("structextends")
            .map(|s| s.split(',').map(str::to_string).collect())
            .unwrap_or_default();
        let returned_only = node.attribute("returnedonly") == Some("true");
        Ok(Aggregate { members, struct_extends, returned_only })
    }

    fn funcpointer(&self, node: Node) -> Result<FuncPointer> {
        if let Some(proto) = node.children().find(|n| n.has_tag_name("proto")) {
            // Registries from 1.4.3xx: <proto> and <param> elements, like commands.
            let proto = self.field(proto)?;
            let mut params = Vec::new();
            for param in node.children().filter(|n| n.has_tag_name("param")) {
                params.push(self.field(param)?);
            }
            return Ok(FuncPointer { return_type: proto.ty, params });
        }
        // Older registries: `typedef R (VKAPI_PTR *<name>PFN_x</name>)(<type>T</type> a, ...);`
        let text = decl_text(node);
        let parsed = parse_c_funcpointer(&text);
        match parsed {
            Some(fp) => Ok(fp),
            None => self.err(node, format!("cannot read function pointer `{text}`")),
        }
    }

    /// A `<member>`, `<param>`, `<proto>` or basetype: `[const] <type>T</type> [*|const]* <name>n</name>
    /// [ [N] | [<enum>C</enum>] ]* [:bits]`.
    fn field(&self, node: Node) -> Result<Field> {
        let mut prefix = String::new();
        let mut middle = String::new();
        let mut suffix = String::new();
        let mut base = None;
        let mut name = None;
        for child in node.children() {
            match child.tag_name().name() {
                "comment" => {}
                "type" => base = child.text(),
                "name" => name = child.text(),
                _ => {
                    let text = child.text().unwrap_or("");
                    match (base.is_some(), name.is_some()) {
                        (false, _) => prefix.push_str(text),
                        (true, false) => middle.push_str(text),
                        (true, true) => suffix.push_str(text),
                    }
                }
            }
        }
        let (Some(base), Some(name)) = (base, name) else {
            return self.err(node, "declaration without <type> or <name>");
        };
        if !is_identifier(base) || !is_identifier(name) {
            return self.err(node, format!("`{base} {name}` is not a C type and identifier"));
        }
        let mut pointers = Vec::new();
        let is_const = prefix.split_whitespace().any(|w| w == "const");
        let mut pointee_const = is_const;
        for token in tokens(&middle) {
            match token.as_str() {
                "*" => {
                    pointers.push(pointee_const);
                    pointee_const = false;
                }
                "const" => pointee_const = true,
                "struct" => {}
                other => return self.err(node, format!("unexpected `{other}` in declaration")),
            }
        }
        let (array, bitfield) = match parse_declarator_suffix(&suffix) {
            Some(v) => v,
            None => return self.err(node, format!("cannot read declarator suffix `{suffix}`")),
        };
        Ok(Field {
            name: name.to_string(),
            ty: CType { base: base.to_string(), pointers },
            array,
            is_const,
            bitfield,
            optional: node.attribute("optional").is_some_and(|o| o.starts_with("true")),
            no_auto_validity: node.attribute("noautovalidity") == Some("true"),
            len: node.attribute("len").or(node.attribute("altlen")).map(str::to_string),
            values: node.attribute("values").map(str::to_string),
            c_decl: decl_text(node),
        })
    }

    // ---- enums and constants -----------------------------------------------------------------

    fn enums(&mut self, section: Node) -> Result<()> {
        let name = self.attr(section, "name")?;
        let kind = section.attribute("type");
        if name == "API Constants" || kind == Some("constants") {
            for node in section.children().filter(|n| n.has_tag_name("enum")) {
                if self.for_our_api(node, "api")? {
                    self.constant(node)?;
                }
            }
            return Ok(());
        }
        let is_bitmask = match kind {
            Some("enum") => false,
            Some("bitmask") => true,
            other => return self.err(section, format!("unknown enums type {other:?}")),
        };
        let width = match section.attribute("bitwidth") {
            None | Some("32") => 32,
            Some("64") => 64,
            Some(other) => return self.err(section, format!("unknown bitwidth `{other}`")),
        };
        let mut group =
            EnumGroup { name: name.to_string(), is_bitmask, width, values: BTreeMap::new() };
        for node in section.children().filter(|n| n.has_tag_name("enum")) {
            if self.for_our_api(node, "api")? {
                let value = self.enum_value(node, None)?;
                let value_name = self.attr(node, "name")?;
                if !is_identifier(value_name) {
                    return self.err(node, format!("enum value name `{value_name}` is not a C identifier"));
                }
                group.values.insert(value_name.to_string(), value);
            }
        }
        self.reg.enums.insert(name.to_string(), group);
        Ok(())
    }

    fn constant(&mut self, node: Node) -> Result<()> {
        let name = self.attr(node, "name")?;
        let value = if let Some(alias) = node.attribute("alias") {
            ConstantValue::Alias(alias.to_string())
        } else {
            let text = self.attr(node, "value")?;
            match parse_constant(text, node.attribute("type")) {
                Some(v) => v,
                None => return self.err(node, format!("cannot read constant value `{text}`")),
            }
        };
        self.reg.constants.insert(name.to_string(), Constant { name: name.to_string(), value });
        Ok(())
    }

    /// The value of an `<enum>`: `value`, `bitpos`, `alias` or extension `offset`.
    fn enum_value(&self, node: Node, ext_number: Option<u32>) -> Result<EnumValue> {
        if let Some(alias) = node.attribute("alias") {
            return Ok(EnumValue::Alias(alias.to_string()));
        }
        if let Some(v) = node.attribute("value") {
            return match parse_int(v) {
                Some(v) => Ok(EnumValue::Value(v)),
                None => self.err(node, format!("cannot read enum value `{v}`")),
            };
        }
        if let Some(bit) = node.attribute("bitpos") {
            return match bit.parse::<u32>() {
                Ok(bit) if bit < 64 => Ok(EnumValue::Value((1u64 << bit) as i64)),
                _ => self.err(node, format!("bad bitpos `{bit}`")),
            };
        }
        if let Some(offset) = node.attribute("offset") {
            let ext = match node.attribute("extnumber") {
                Some(n) => n.parse().ok(),
                None => ext_number,
            };
            let (Some(ext), Ok(offset)) = (ext, offset.parse::<i64>()) else {
                return self.err(node, "offset without a usable extension number");
            };
            let value = 1_000_000_000 + (ext as i64 - 1) * 1000 + offset;
            return Ok(EnumValue::Value(if node.attribute("dir") == Some("-") { -value } else { value }));
        }
        self.err(node, "enum without value, bitpos, offset or alias")
    }

    // ---- commands ----------------------------------------------------------------------------

    fn commands(&mut self, section: Node) -> Result<()> {
        for node in section.children().filter(|n| n.has_tag_name("command")) {
            if !self.for_our_api(node, "api")? {
                continue;
            }
            if let Some(target) = node.attribute("alias") {
                let name = self.attr(node, "name")?;
                self.reg.command_aliases.insert(name.to_string(), target.to_string());
                continue;
            }
            let Some(proto) = node.children().find(|n| n.has_tag_name("proto")) else {
                return self.err(node, "command without <proto>");
            };
            let proto = self.field(proto)?;
            let mut params = Vec::new();
            for param in node.children().filter(|n| n.has_tag_name("param")) {
                if self.for_our_api(param, "api")? {
                    params.push(self.field(param)?);
                }
            }
            let codes = |attr: &str| -> Vec<String> {
                node.attribute(attr)
                    .map(|c| c.split(',').map(str::to_string).collect())
                    .unwrap_or_default()
            };
            let command = Command {
                name: proto.name.clone(),
                return_type: proto.ty,
                params,
                level: Level::Global, // classified in `finish`, once every handle type is known
                aliases: Vec::new(),
                success_codes: codes("successcodes"),
                error_codes: codes("errorcodes"),
            };
            if self.reg.commands.insert(command.name.clone(), command).is_some() {
                return self.err(node, "command defined twice for the same api");
            }
        }
        Ok(())
    }

    // ---- features and extensions -------------------------------------------------------------

    fn feature(&mut self, node: Node) -> Result<()> {
        if !self.for_our_api(node, "api")? {
            return Ok(());
        }
        let name = self.attr(node, "name")?.to_string();
        let number = self.attr(node, "number")?;
        let Some(version) = parse_version_number(number) else {
            return self.err(node, format!("bad feature number `{number}`"));
        };
        let depends = self.depends_attr(node, "depends")?;
        let requires = self.requires(node, None, &name)?;
        let internal = node.attribute("apitype") == Some("internal");
        self.reg.features.push(Feature { name, version, internal, depends, requires });
        Ok(())
    }

    fn extensions(&mut self, section: Node, is_vk: bool) -> Result<()> {
        for node in section.children().filter(|n| n.has_tag_name("extension")) {
            let supported = self.attr(node, "supported")?;
            if !self.for_our_api(node, "supported")? || supported == "disabled" {
                continue;
            }
            let name = self.attr(node, "name")?.to_string();
            if !is_vk {
                // video.xml's "extensions" are codec headers: only their constants matter.
                self.requires(node, None, &name)?;
                continue;
            }
            let number: u32 = match self.attr(node, "number")?.parse() {
                Ok(n) => n,
                Err(_) => return self.err(node, "bad extension number"),
            };
            let requires = self.requires(node, Some(number), &name)?;
            let kind = match self.attr(node, "type")? {
                "instance" => ExtensionKind::Instance,
                "device" => ExtensionKind::Device,
                other => return self.err(node, format!("unknown extension type `{other}`")),
            };
            let spec_version = self.spec_version(node, &name)?;
            let depends = match self.depends_attr(node, "depends")? {
                Some(d) => Some(d),
                None => legacy_requires(node),
            };
            let ext = Extension {
                name: name.clone(),
                number,
                kind,
                platform: node.attribute("platform").map(str::to_string),
                provisional: node.attribute("provisional") == Some("true"),
                spec_version,
                promoted_to: node.attribute("promotedto").map(str::to_string),
                deprecated_by: node.attribute("deprecatedby").map(str::to_string),
                obsoleted_by: node.attribute("obsoletedby").map(str::to_string),
                depends,
                requires,
            };
            self.reg.extensions.insert(name, ext);
        }
        Ok(())
    }

    fn spec_version(&self, node: Node, name: &str) -> Result<u32> {
        for e in node.descendants().filter(|n| n.has_tag_name("enum")) {
            let is_spec = e.attribute("name").is_some_and(|n| n.ends_with("_SPEC_VERSION"));
            if is_spec && self.for_our_api(e, "api")? {
                if let Some(v) = e.attribute("value").and_then(|v| v.parse().ok()) {
                    return Ok(v);
                }
            }
        }
        self.err(node, format!("extension {name} has no numeric _SPEC_VERSION"))
    }

    fn depends_attr(&self, node: Node, attr: &str) -> Result<Option<Depends>> {
        match node.attribute(attr) {
            None => Ok(None),
            Some(text) => match depends::parse(text) {
                Ok(d) => Ok(Some(d)),
                Err(e) => self.err(node, format!("bad `{attr}` expression `{text}`: {e}")),
            },
        }
    }

    /// The `<require>` blocks of a feature or extension; enum values they add to existing groups
    /// are recorded as they are read.
    fn requires(&mut self, parent: Node, ext_number: Option<u32>, origin: &str) -> Result<Vec<Require>> {
        let mut out = Vec::new();
        for block in parent.children().filter(|n| n.has_tag_name("require")) {
            if !self.for_our_api(block, "api")? {
                continue;
            }
            let mut require = Require { depends: self.depends_attr(block, "depends")?, ..Default::default() };
            // Older registries: `<require feature="VK_VERSION_1_1">` / `<require extension="X">`.
            let legacy: Vec<Depends> = ["feature", "extension"]
                .iter()
                .filter_map(|a| block.attribute(*a))
                .map(|n| Depends::Name(n.to_string()))
                .collect();
            if require.depends.is_none() && !legacy.is_empty() {
                require.depends = Some(depends::all(legacy));
            }
            for item in block.children().filter(Node::is_element) {
                if !self.for_our_api(item, "api")? {
                    continue;
                }
                match item.tag_name().name() {
                    "command" => require.commands.push(self.attr(item, "name")?.to_string()),
                    "type" => require.types.push(self.attr(item, "name")?.to_string()),
                    "enum" => self.required_enum(item, ext_number, origin)?,
                    "comment" | "feature" => {}
                    other => return self.err(item, format!("unknown element `{other}` in require")),
                }
            }
            out.push(require);
        }
        Ok(out)
    }

    fn required_enum(&mut self, node: Node, ext_number: Option<u32>, origin: &str) -> Result<()> {
        let name = self.attr(node, "name")?;
        let Some(target) = node.attribute("extends") else {
            // A constant defined by the block. In vk.xml these are the extension's name and spec
            // version (read by `spec_version`); in video.xml, array sizes the types use.
            // Extensions also add aliases of API constants (`VK_MAX_GLOBAL_PRIORITY_SIZE_KHR`).
            if let Some(target) = node.attribute("alias").filter(|t| self.reg.constants.contains_key(*t)) {
                let value = ConstantValue::Alias(target.to_string());
                self.reg.constants.insert(name.to_string(), Constant { name: name.to_string(), value });
            }
            if let (Some(value), "video.xml") = (node.attribute("value"), self.file) {
                if let (Some(v), false) = (parse_int(value), self.reg.constants.contains_key(name)) {
                    let value = ConstantValue::U32(v as u32);
                    self.reg.constants.insert(name.to_string(), Constant { name: name.to_string(), value });
                }
            }
            return Ok(());
        };
        let value = self.enum_value(node, ext_number)?;
        let Some(group) = self.reg.enums.get_mut(target) else {
            return self.err(node, format!("extends unknown enum `{target}`"));
        };
        group.values.entry(name.to_string()).or_insert(value);
        self.reg.value_origins.entry(name.to_string()).or_insert_with(|| origin.to_string());
        Ok(())
    }
}

/// Older registries: `requires="A,B"` (all of them) and `requiresCore="1.1"`.
fn legacy_requires(node: Node) -> Option<Depends> {
    let mut all: Vec<Depends> = node
        .attribute("requires")
        .map(|r| r.split(',').map(|n| Depends::Name(n.to_string())).collect())
        .unwrap_or_default();
    if let Some(core) = node.attribute("requiresCore") {
        if core != "1.0" {
            all.push(Depends::Name(format!("VK_VERSION_{}", core.replace('.', "_"))));
        }
    }
    (!all.is_empty()).then(|| depends::all(all))
}

/// After all files are read: classify commands, attach aliases, drop what no supported feature or
/// extension requires.
fn finish(reg: &mut Registry) {
    let required: BTreeSet<String> = reg
        .features
        .iter()
        .flat_map(|f| &f.requires)
        .chain(reg.extensions.values().flat_map(|e| &e.requires))
        .flat_map(|r| r.commands.iter().cloned())
        .collect();
    // Resolve alias chains to the canonical command.
    let aliases: Vec<(String, String)> = reg
        .command_aliases
        .keys()
        .map(|alias| {
            let mut target = reg.command_aliases[alias].clone();
            while let Some(next) = reg.command_aliases.get(&target) {
                target = next.clone();
            }
            (alias.clone(), target)
        })
        .collect();
    reg.command_aliases = aliases
        .into_iter()
        .filter(|(alias, target)| required.contains(alias) && reg.commands.contains_key(target))
        .collect();
    let aliased: BTreeSet<&String> = reg.command_aliases.values().collect();
    let keep: BTreeSet<String> = reg
        .commands
        .keys()
        .filter(|name| required.contains(*name) || aliased.contains(name))
        .cloned()
        .collect();
    reg.commands.retain(|name, _| keep.contains(name));
    for (alias, target) in &reg.command_aliases {
        reg.commands.get_mut(target).expect("filtered above").aliases.push(alias.clone());
    }
    let levels: Vec<(String, Level)> =
        reg.commands.values().map(|c| (c.name.clone(), classify(reg, c))).collect();
    for (name, level) in levels {
        reg.commands.get_mut(&name).expect("same keys").level = level;
    }
}

/// The level of a command, from the type of its first parameter.
fn classify(reg: &Registry, command: &Command) -> Level {
    let first = command.params.first().filter(|p| p.ty.pointers.is_empty());
    let dispatchable = first.map(|p| resolve_alias(reg, &p.ty.base)).filter(|t| {
        matches!(reg.types.get(*t), Some(TypeDef::Handle { dispatchable: true, .. }))
    });
    match dispatchable {
        Some("VkInstance") => Level::Instance,
        Some("VkPhysicalDevice") => Level::PhysicalDevice,
        Some(_) => Level::Device,
        None => Level::Global,
    }
}

/// Follows type aliases to the defining name.
pub fn resolve_alias<'a>(reg: &'a Registry, mut name: &'a str) -> &'a str {
    while let Some(TypeDef::Alias(target)) = reg.types.get(name) {
        name = target;
    }
    name
}

// ---- small text helpers ------------------------------------------------------------------------

fn child_text<'a>(node: Node<'a, '_>, tag: &str) -> Option<&'a str> {
    node.children().find(|n| n.has_tag_name(tag)).and_then(|n| n.text())
}

/// The declaration text of an element without its `<comment>` children, whitespace normalised.
fn decl_text(node: Node) -> String {
    let mut text = String::new();
    for d in node.descendants().filter(Node::is_text) {
        if d.ancestors().any(|a| a.has_tag_name("comment")) {
            continue;
        }
        text.push_str(d.text().unwrap_or(""));
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Splits `const* const *` into `const`, `*`, `const`, `*`.
fn tokens(text: &str) -> Vec<String> {
    text.replace('*', " * ").split_whitespace().map(str::to_string).collect()
}

/// `[4]`, `[VK_UUID_SIZE]`, `[3][4]`, `:24`.
fn parse_declarator_suffix(text: &str) -> Option<(Vec<ArrayLen>, Option<u32>)> {
    let mut rest = text.trim();
    let mut array = Vec::new();
    while let Some(after) = rest.strip_prefix('[') {
        let (inner, tail) = after.split_once(']')?;
        let inner = inner.trim();
        array.push(match inner.parse() {
            Ok(n) => ArrayLen::Literal(n),
            Err(_) if is_identifier(inner) => ArrayLen::Constant(inner.to_string()),
            Err(_) => return None,
        });
        rest = tail.trim_start();
    }
    let bitfield = match rest.strip_prefix(':') {
        Some(bits) => Some(bits.trim().parse().ok()?),
        None if rest.is_empty() || rest == ";" => None,
        None => return None,
    };
    Some((array, bitfield))
}

/// A C identifier: what every name must be before the emitters turn it into a Rust one.
fn is_identifier(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `typedef R (VKAPI_PTR *PFN_x)(T a, const U* b);` with the inner text already flattened.
fn parse_c_funcpointer(text: &str) -> Option<FuncPointer> {
    let body = text.strip_prefix("typedef ")?;
    let (ret, rest) = body.split_once("(VKAPI_PTR")?;
    let (_, params) = rest.split_once(")(")?;
    let params = params.trim_end_matches(';').trim().strip_suffix(')')?;
    let return_type = parse_plain_decl(&format!("{ret} _"))?.ty;
    let mut out = Vec::new();
    if params.trim() != "void" {
        for p in params.split(',') {
            out.push(parse_plain_decl(p)?);
        }
    }
    Some(FuncPointer { return_type, params: out })
}

/// A flat C declaration such as `const char* pName`.
fn parse_plain_decl(decl: &str) -> Option<Field> {
    let spaced = decl.replace('*', " * ");
    let words: Vec<&str> = spaced.split_whitespace().collect();
    let (name, rest) = words.split_last()?;
    let mut pointers = Vec::new();
    let mut pointee_const = false;
    let mut base = None;
    for w in rest {
        match *w {
            "const" => pointee_const = true,
            "struct" => {}
            "*" => {
                pointers.push(pointee_const);
                pointee_const = false;
            }
            ty => base = Some(ty.to_string()),
        }
    }
    Some(Field {
        name: name.to_string(),
        ty: CType { base: base?, pointers },
        array: Vec::new(),
        is_const: false,
        bitfield: None,
        optional: false,
        no_auto_validity: false,
        len: None,
        values: None,
        c_decl: words.join(" "),
    })
}

fn is_c_builtin(name: &str) -> bool {
    matches!(
        name,
        "void" | "char" | "float" | "double" | "int" | "size_t" | "int8_t" | "uint8_t" | "int16_t"
            | "uint16_t" | "int32_t" | "uint32_t" | "int64_t" | "uint64_t"
    )
}

fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let (negative, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let t = t.trim_end_matches(['U', 'L', 'u', 'l']);
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex, 16).ok()?,
        None => t.parse().ok()?,
    };
    Some(if negative { -v } else { v })
}

/// API constant values: `256`, `(~0U)`, `(~0ULL)`, `(~2U)`, `1000.0F`.
fn parse_constant(text: &str, ty: Option<&str>) -> Option<ConstantValue> {
    let t = text.trim().trim_start_matches('(').trim_end_matches(')');
    let ty = ty.unwrap_or(if t.ends_with("ULL") {
        "uint64_t"
    } else if t.ends_with('F') || t.ends_with('f') {
        "float"
    } else {
        "uint32_t"
    });
    let (not, digits) = match t.strip_prefix('~') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    match ty {
        "float" => Some(ConstantValue::F32(digits.trim_end_matches(['F', 'f']).parse().ok()?)),
        "uint32_t" => {
            let v = parse_int(digits)? as u32;
            Some(ConstantValue::U32(if not { !v } else { v }))
        }
        "uint64_t" => {
            let v = parse_int(digits)? as u64;
            Some(ConstantValue::U64(if not { !v } else { v }))
        }
        _ => None,
    }
}

fn parse_version_number(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarator_suffixes() {
        assert_eq!(parse_declarator_suffix(""), Some((vec![], None)));
        assert_eq!(parse_declarator_suffix(":24"), Some((vec![], Some(24))));
        assert_eq!(
            parse_declarator_suffix("[3][4]"),
            Some((vec![ArrayLen::Literal(3), ArrayLen::Literal(4)], None))
        );
        assert_eq!(
            parse_declarator_suffix("[VK_UUID_SIZE]"),
            Some((vec![ArrayLen::Constant("VK_UUID_SIZE".into())], None))
        );
        assert_eq!(parse_declarator_suffix("[3"), None);
    }

    #[test]
    fn constants() {
        assert_eq!(parse_constant("(~0U)", Some("uint32_t")), Some(ConstantValue::U32(u32::MAX)));
        assert_eq!(parse_constant("(~2U)", None), Some(ConstantValue::U32(!2)));
        assert_eq!(parse_constant("(~0ULL)", None), Some(ConstantValue::U64(u64::MAX)));
        assert_eq!(parse_constant("1000.0F", None), Some(ConstantValue::F32(1000.0)));
        assert_eq!(parse_int("-1000001004"), Some(-1000001004));
        assert_eq!(parse_int("0x7FFFFFFF"), Some(0x7FFF_FFFF));
    }

    #[test]
    fn old_style_funcpointer() {
        let fp = parse_c_funcpointer(
            "typedef void* (VKAPI_PTR *PFN_vkAllocationFunction)( void* pUserData, size_t size, const char* const* names);",
        )
        .unwrap();
        assert_eq!(fp.return_type, CType { base: "void".into(), pointers: vec![false] });
        assert_eq!(fp.params.len(), 3);
        assert_eq!(fp.params[2].ty.pointers, vec![true, true]);
        let void = parse_c_funcpointer("typedef void (VKAPI_PTR *PFN_vkVoidFunction)(void);").unwrap();
        assert!(void.params.is_empty() && void.return_type.is_void());
    }

    #[test]
    fn errors_name_element_and_line() {
        let xml = "<registry>\n<types>\n<type category=\"weird\" name=\"VkX\"/>\n</types>\n</registry>";
        let e = parse(xml, None).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.element.contains("VkX"), "{e}");
        assert!(e.message.contains("unknown type category"), "{e}");
        let xml = "<registry><commands><command api=\"vulkanxx\"/></commands></registry>";
        let e = parse(xml, None).unwrap_err();
        assert!(e.message.contains("unknown api value"), "{e}");
        let xml = "<registry><types><type category=\"struct\" name=\"VkS\">\n<member><type>uint32_t</type> <name>bad name</name></member></type></types></registry>";
        let e = parse(xml, None).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("not a C type and identifier"), "{e}");
        let xml = "<registry><types><type category=\"handle\" name=\"VkH\"/></types></registry>";
        let e = parse(xml, None).unwrap_err();
        assert!(e.message.contains("unknown handle macro"), "{e}");
        let xml = "<registry><extensions><extension name=\"VK_X\" supported=\"vulkan\" number=\"1\"/></extensions></registry>";
        let e = parse(xml, None).unwrap_err();
        assert!(e.message.contains("missing attribute `type`"), "{e}");
    }
}
