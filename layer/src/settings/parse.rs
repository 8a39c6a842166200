//! A channel's raw value read as a setting's type.

use super::{Raw, SettingType, Value};

/// The declared default as a value.
pub fn default_value(ty: SettingType) -> Value {
    match ty {
        SettingType::Bool(v) => Value::Bool(v),
        SettingType::Int(v) => Value::Int(v),
        SettingType::String(v) | SettingType::SaveFile(v) => Value::String(v.to_string()),
        SettingType::List(v) => Value::List(v.iter().map(|s| s.to_string()).collect()),
    }
}

/// `raw` as a value of `ty`; `Err` says why it is not one.
pub fn value(ty: SettingType, raw: &Raw) -> Result<Value, String> {
    match (ty, raw) {
        (SettingType::Bool(_), Raw::Text(t)) => boolean(t).map(Value::Bool),
        (SettingType::Bool(_), Raw::Bools(v)) => one(v).copied().map(Value::Bool),
        (SettingType::Int(_), Raw::Text(t)) => integer(t).map(Value::Int),
        (SettingType::Int(_), Raw::Ints(v)) => {
            let v = *one(v)?;
            i64::try_from(v)
                .map(Value::Int)
                .map_err(|_| format!("{v} is out of range"))
        }
        (SettingType::String(_) | SettingType::SaveFile(_), Raw::Text(t)) => {
            Ok(Value::String(t.clone()))
        }
        (SettingType::String(_) | SettingType::SaveFile(_), Raw::Strings(v)) => {
            one(v).cloned().map(Value::String)
        }
        (SettingType::List(_), Raw::Text(t)) => Ok(Value::List(list(t))),
        (SettingType::List(_), Raw::Strings(v)) => Ok(Value::List(v.clone())),
        (ty, raw) => Err(format!(
            "a value of another type ({}) than the setting's ({})",
            raw_type(raw),
            type_name(ty)
        )),
    }
}

fn one<T>(values: &[T]) -> Result<&T, String> {
    match values {
        [v] => Ok(v),
        _ => Err(format!("{} values where one is expected", values.len())),
    }
}

fn boolean(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "on" => Ok(true),
        "false" | "off" => Ok(false),
        t => integer(t)
            .map(|v| v != 0)
            .map_err(|_| format!("`{text}` is not a boolean")),
    }
}

fn integer(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex, 16),
        None => t.parse(),
    };
    parsed.map_err(|_| format!("`{text}` is not an integer"))
}

/// Items separated by `,`, or by `:` when there is no `,` (as the Khronos library splits);
/// trimmed, empty ones dropped.
fn list(text: &str) -> Vec<String> {
    let separator = if !text.contains(',') && text.contains(':') {
        ':'
    } else {
        ','
    };
    text.split(separator)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn type_name(ty: SettingType) -> &'static str {
    match ty {
        SettingType::Bool(_) => "bool",
        SettingType::Int(_) => "integer",
        SettingType::String(_) | SettingType::SaveFile(_) => "string",
        SettingType::List(_) => "list of strings",
    }
}

fn raw_type(raw: &Raw) -> &'static str {
    match raw {
        Raw::Text(_) => "text",
        Raw::Bools(_) => "bool",
        Raw::Ints(_) => "integer",
        Raw::Strings(_) => "string",
    }
}
