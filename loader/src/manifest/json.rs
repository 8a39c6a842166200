//! JSON read as the Khronos loader reads its manifests and settings file: with its own copy of
//! cJSON (Vulkan-Loader's `loader/cJSON.c`, 1.4.360), whose reading differs from the standard's
//! in ways manifests in the wild rely on. A file it accepts is accepted here, one it refuses is
//! refused (with serde_json's message, which says where):
//!
//! - a UTF-8 byte-order mark at the start is skipped (`skip_utf8_bom`);
//! - whatever follows the first value is ignored: text, a NUL byte, a second value
//!   (`loader_get_json` parses with `loader_cJSON_ParseWithLength`, which does not ask for the
//!   end of the text after the value);
//! - every byte up to the space is whitespace between tokens (`buffer_skip_whitespace`: `<= 32`),
//!   and a string may hold raw control characters (`parse_string` copies every byte up to the
//!   closing quote); a string is a C string there, so a raw NUL ends it;
//! - an object keeps all its members in order, a key given twice included, and a field is the
//!   first member whose key matches, ignoring ASCII case (`loader_cJSON_GetObjectItem` is
//!   `get_object_item(object, name, case_sensitive = false)`, a walk from the first member).
//!
//! The syntax is serde_json's, read through a visitor that keeps objects as cJSON does; a pre-pass
//! turns cJSON's extra whitespace and raw control characters into what serde_json reads. Bytes
//! that are not UTF-8 inside a string (which cJSON copies as they are) are read as U+FFFD, as a
//! Rust string cannot hold them. Left as serde_json reads them (see docs/compatibility.md):
//! numbers cJSON's `strtod` takes but JSON does not (`01`, `1.`), and nesting deeper than 128
//! (cJSON allows 1000).

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value as cJSON holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    /// The members in the file's order, every one of them (a key may come twice).
    Object(Vec<(String, Json)>),
}

/// Parses the text of a manifest or settings file as cJSON does (see the module's comment).
pub fn parse(text: &[u8]) -> Result<Json, serde_json::Error> {
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    // Most files are plain JSON, read as they are; one serde_json refuses is read again after the
    // pre-pass, which changes only what cJSON reads otherwise than JSON does.
    first_value(text).or_else(|e| match normalize(text) {
        Some(normalized) => first_value(&normalized),
        None => Err(e),
    })
}

/// The first JSON value of `text`; what follows it is not read (no `Deserializer::end`).
fn first_value(text: &[u8]) -> Result<Json, serde_json::Error> {
    Json::deserialize(&mut serde_json::Deserializer::from_slice(text))
}

/// The text with cJSON's extra whitespace (bytes up to the space other than tab, line feed and
/// carriage return) made spaces, control characters inside strings escaped, a string cut at a
/// NUL, and bytes that are not UTF-8 made U+FFFD; `None` when that changes nothing.
fn normalize(original: &[u8]) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(original);
    let mut out = Vec::with_capacity(text.len() + 16);
    let (mut in_string, mut escaped, mut cut) = (false, false, false);
    for &b in text.as_bytes() {
        if !in_string {
            in_string = b == b'"';
            out.push(if b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r') { b' ' } else { b });
            continue;
        }
        let after_backslash = escaped;
        escaped = !after_backslash && b == b'\\';
        if !after_backslash && b == b'"' {
            (in_string, cut) = (false, false);
            out.push(b);
            continue;
        }
        match b {
            _ if cut => {}
            // serde_json judges the escape; one of a control character is an error for both.
            _ if after_backslash => out.push(b),
            0 => cut = true,
            0x01..=0x1f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    (out != original).then_some(out)
}

impl Json {
    /// The object's first member named `key`, ignoring ASCII case, as cJSON's
    /// `loader_cJSON_GetObjectItem`; `None` for anything but an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.members().iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v)
    }

    /// The object's members in order (empty for anything but an object).
    pub fn members(&self) -> &[(String, Json)] {
        match self {
            Json::Object(members) => members,
            _ => &[],
        }
    }

    /// What cJSON's `cJSON_ArrayForEach` walks: an array's elements, an object's member values,
    /// nothing for a scalar.
    pub fn children(&self) -> Box<dyn Iterator<Item = &Json> + '_> {
        match self {
            Json::Array(items) => Box::new(items.iter()),
            Json::Object(members) => Box::new(members.iter().map(|(_, v)| v)),
            _ => Box::new(std::iter::empty()),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Json::Object(_))
    }

    /// `true` only for JSON `true` (cJSON's `loader_cJSON_IsTrue`).
    pub fn is_true(&self) -> bool {
        matches!(self, Json::Bool(true))
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Number(n) => n.as_u64(),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            members.push((key, value));
        }
        Ok(Json::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(text: &[u8], key: &str) -> Option<String> {
        parse(text).unwrap().get(key).and_then(Json::as_str).map(str::to_string)
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        assert_eq!(string(b"\xEF\xBB\xBF{\"a\": \"x\"}", "a").as_deref(), Some("x"));
        // Only at the very start, as cJSON's skip_utf8_bom.
        assert!(parse(b" \xEF\xBB\xBF{\"a\": \"x\"}").is_err());
        assert!(parse(b"\xEF\xBB\xBF").is_err());
    }

    #[test]
    fn what_follows_the_first_value_is_ignored() {
        for text in [&b"{\"a\": \"x\"} trailing text"[..], b"{\"a\": \"x\"}\0", b"{\"a\": \"x\"}\0garbage", b"{\"a\": \"x\"}{\"a\": \"y\"}", b"{\"a\": \"x\"}}"] {
            assert_eq!(string(text, "a").as_deref(), Some("x"), "{}", String::from_utf8_lossy(text));
        }
        // The first value itself must be whole.
        assert!(parse(b"{\"a\": \"x\"").is_err());
        assert!(parse(b"").is_err());
        assert!(parse(b"\0{\"a\": 1}").is_ok(), "a NUL before the value is whitespace to cJSON");
    }

    #[test]
    fn the_first_of_a_key_given_twice_is_taken_whatever_its_case() {
        let json = parse(br#"{"a": "first", "a": "second", "B": "upper", "b": "lower"}"#).unwrap();
        assert_eq!(json.get("a").and_then(Json::as_str), Some("first"));
        assert_eq!(json.get("A").and_then(Json::as_str), Some("first"));
        assert_eq!(json.get("b").and_then(Json::as_str), Some("upper"));
        assert_eq!(json.members().len(), 4, "every member kept, in order");
        let nested = parse(br#"{"o": {"k": 1, "k": 2}, "o": {"k": 3}}"#).unwrap();
        assert_eq!(nested.get("o").and_then(|o| o.get("k")).and_then(Json::as_u64), Some(1));
        assert_eq!(parse(br#"["a"]"#).unwrap().get("a"), None, "an array has no members");
    }

    #[test]
    fn control_characters_are_whitespace_and_string_content_as_for_cjson() {
        let json = parse(b"\x0c{\x0b\"a\"\x01:\x1f\"tab\there\x01\nnewline\",\"cut\":\"lib\0x.so\"}").unwrap();
        assert_eq!(json.get("a").and_then(Json::as_str), Some("tab\there\u{1}\nnewline"));
        assert_eq!(json.get("cut").and_then(Json::as_str), Some("lib"), "a C string ends at a NUL");
        // Escapes keep their meaning; an escaped quote does not end the string.
        let json = parse(b"{\"a\":\"q\\\"\x02\\\\\",\"b\":\"\\u0041\"}").unwrap();
        assert_eq!(json.get("a").and_then(Json::as_str), Some("q\"\u{2}\\"));
        assert_eq!(json.get("b").and_then(Json::as_str), Some("A"));
        // A backslash before a control character is an error for both.
        assert!(parse(b"{\"a\":\"\\\x01\"}").is_err());
    }

    #[test]
    fn bytes_that_are_not_utf8_are_read_in_strings_and_refused_elsewhere() {
        assert_eq!(string(b"{\"d\": \"caf\xe9\"}", "d").as_deref(), Some("caf\u{fffd}"));
        assert!(parse(b"{\"d\": \xe9}").is_err());
    }

    #[test]
    fn children_are_what_cjson_walks() {
        let json = parse(br#"{"arr": [1, 2], "obj": {"x": 3, "y": 4}, "s": "text"}"#).unwrap();
        let walk = |key: &str| json.get(key).unwrap().children().filter_map(Json::as_u64).collect::<Vec<_>>();
        assert_eq!(walk("arr"), [1, 2]);
        assert_eq!(walk("obj"), [3, 4]);
        assert!(walk("s").is_empty());
    }

    #[test]
    fn syntax_errors_are_still_refused() {
        for text in [&br#"{"a": 1,}"#[..], br#"[1,]"#, br#"{"a" 1}"#, br#"{a: 1}"#, b"{\"a\": 'x'}", b"nonsense"] {
            assert!(parse(text).is_err(), "{}", String::from_utf8_lossy(text));
        }
    }
}
