//! The JSON text of one traced call, written into a reused buffer: objects, arrays, numbers,
//! strings, handles and addresses as hex strings, enum values and flag bits by name.

use std::fmt::Write as _;

/// Pointers are followed at most this deep; deeper (a `pNext` chain that loops back on itself)
/// is cut short with `"..."`.
pub const MAX_DEPTH: u32 = 32;

/// A JSON text being written. Commas are placed by [`key`](Self::key) and
/// [`element`](Self::element): the value writers write only the value.
pub struct Json {
    text: String,
    depth: u32,
}

impl Json {
    /// Writes into `buffer`, cleared first (its allocation is reused).
    pub fn new(mut buffer: String) -> Json {
        buffer.clear();
        Json { text: buffer, depth: 0 }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn into_string(self) -> String {
        self.text
    }

    /// Text written as is (the caller makes sure it is valid JSON in its place).
    pub(crate) fn raw(&mut self, text: &str) {
        self.text.push_str(text);
    }

    /// A comma unless this is the first member or element.
    fn separate(&mut self) {
        if !matches!(self.text.as_bytes().last(), None | Some(b'{' | b'[')) {
            self.text.push(',');
        }
    }

    /// `"name":` of an object member; registry names need no escaping.
    pub fn key(&mut self, name: &str) {
        self.separate();
        self.text.push('"');
        self.text.push_str(name);
        self.text.push_str("\":");
    }

    /// Before each element of an array.
    pub fn element(&mut self) {
        self.separate();
    }

    pub fn open_object(&mut self) {
        self.text.push('{');
        self.depth += 1;
    }

    pub fn close_object(&mut self) {
        self.text.push('}');
        self.depth = self.depth.saturating_sub(1);
    }

    pub fn open_array(&mut self) {
        self.text.push('[');
        self.depth += 1;
    }

    pub fn close_array(&mut self) {
        self.text.push(']');
        self.depth = self.depth.saturating_sub(1);
    }

    /// Whether pointers may still be followed from here; else `"..."` is written in their place.
    pub fn may_follow(&mut self) -> bool {
        let deep_enough = self.depth < MAX_DEPTH;
        if !deep_enough {
            self.text.push_str("\"...\"");
        }
        deep_enough
    }

    pub fn null(&mut self) {
        self.text.push_str("null");
    }

    pub fn unsigned(&mut self, value: u64) {
        let _ = write!(self.text, "{value}");
    }

    pub fn signed(&mut self, value: i64) {
        let _ = write!(self.text, "{value}");
    }

    /// A number with a decimal point or exponent (`1.0`, `1e-7`), at `f32` precision.
    pub fn float32(&mut self, value: f32) {
        self.float(value, value.is_finite());
    }

    /// As [`float32`](Self::float32), at `f64` precision.
    pub fn float64(&mut self, value: f64) {
        self.float(value, value.is_finite());
    }

    /// Rust's shortest round-trip spelling; NaN and the infinities, which JSON has no numbers
    /// for, as strings.
    fn float(&mut self, value: impl std::fmt::Debug, finite: bool) {
        if finite {
            let _ = write!(self.text, "{value:?}");
        } else {
            let _ = write!(self.text, "\"{value:?}\"");
        }
    }

    /// `"0x1f"`; zero (a null handle or pointer) is `null`.
    pub fn hex(&mut self, value: u64) {
        if value == 0 {
            self.null();
        } else {
            let _ = write!(self.text, "\"{value:#x}\"");
        }
    }

    /// A string: the bytes as UTF-8 (invalid sequences replaced), escaped.
    pub fn string(&mut self, bytes: &[u8]) {
        self.text.push('"');
        for c in String::from_utf8_lossy(bytes).chars() {
            match c {
                '"' => self.text.push_str("\\\""),
                '\\' => self.text.push_str("\\\\"),
                '\n' => self.text.push_str("\\n"),
                '\t' => self.text.push_str("\\t"),
                '\r' => self.text.push_str("\\r"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(self.text, "\\u{:04x}", c as u32);
                }
                c => self.text.push(c),
            }
        }
        self.text.push('"');
    }

    /// An enum value: its name, or the number where the registry has none.
    pub fn enum_value(&mut self, name: Option<&str>, value: i64) {
        match name {
            Some(name) => {
                self.text.push('"');
                self.text.push_str(name);
                self.text.push('"');
            }
            None => self.signed(value),
        }
    }

    /// Flags as `"VK_A_BIT|VK_B_BIT"` from `bits` (single-bit values and their names); bits
    /// without a name as one hex number at the end; no bit set is `"0"`.
    pub fn flags(&mut self, value: u64, bits: &[(u64, &str)]) {
        self.text.push('"');
        let mut rest = value;
        for &(bit, name) in bits {
            if rest & bit != 0 {
                if rest != value {
                    self.text.push('|');
                }
                self.text.push_str(name);
                rest &= !bit;
            }
        }
        match (rest, rest == value) {
            (0, true) => self.text.push('0'),
            (0, false) => {}
            (rest, first) => {
                if !first {
                    self.text.push('|');
                }
                let _ = write!(self.text, "{rest:#x}");
            }
        }
        self.text.push('"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(write: impl FnOnce(&mut Json)) -> String {
        let mut w = Json::new(String::new());
        write(&mut w);
        w.into_string()
    }

    #[test]
    fn commas_go_between_members_and_elements_only() {
        let text = json(|w| {
            w.open_object();
            w.key("a");
            w.open_array();
            for i in 0..3 {
                w.element();
                w.unsigned(i);
            }
            w.close_array();
            w.key("b");
            w.open_object();
            w.close_object();
            w.close_object();
        });
        assert_eq!(text, r#"{"a":[0,1,2],"b":{}}"#);
    }

    #[test]
    fn strings_are_escaped_and_floats_stay_json() {
        assert_eq!(json(|w| w.string(b"a\"b\\c\n\x01\xff")), r#""a\"b\\c\n\u0001�""#);
        assert_eq!(json(|w| w.float32(0.1)), "0.1");
        assert_eq!(json(|w| w.float32(1.0)), "1.0");
        assert_eq!(json(|w| w.float64(1e-300)), "1e-300");
        assert_eq!(json(|w| w.float64(f64::NAN)), r#""NaN""#);
    }

    #[test]
    fn flags_by_name_with_unknown_bits_last() {
        let bits = [(1, "VK_A_BIT"), (4, "VK_C_BIT")];
        assert_eq!(json(|w| w.flags(5, &bits)), r#""VK_A_BIT|VK_C_BIT""#);
        assert_eq!(json(|w| w.flags(0x13, &bits)), r#""VK_A_BIT|0x12""#);
        assert_eq!(json(|w| w.flags(0x10, &bits)), r#""0x10""#);
        assert_eq!(json(|w| w.flags(0, &bits)), r#""0""#);
    }

    #[test]
    fn zero_handles_are_null() {
        assert_eq!(json(|w| w.hex(0)), "null");
        assert_eq!(json(|w| w.hex(0xab)), r#""0xab""#);
    }
}
