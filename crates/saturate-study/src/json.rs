//! A small JSON value, reader and writer that speak Python's dialect.
//!
//! Optuna's journal is written by Python's `json` module, which emits the bare tokens
//! `NaN`, `Infinity` and `-Infinity`, keeps the difference between `1` and `1.0`, and
//! prints floats with `repr`. `serde_json` does none of that, so the journal and the
//! distribution strings go through this module instead.

use std::fmt::Write as _;

/// A JSON value as Python's `json` module sees it (ints and floats apart, NaN allowed,
/// object keys in insertion order).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer outside `i64` (Python's ints have no bound), as its decimal digits with
    /// an optional `-`: kept exact, never turned into a float.
    BigInt(String),
    Float(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// Looks a key up in an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Int(i) => Some(*i as f64),
            Json::BigInt(digits) => digits.parse().ok(),
            Json::Float(f) => Some(*f),
            _ => None,
        }
    }

    pub(crate) fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Int(i) => Some(*i),
            Json::Float(f) if f.fract() == 0.0 && f.is_finite() => Some(*f as i64),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Converts to a `serde_json::Value`. What it cannot hold: non-finite floats become
    /// `null`, integers outside `i64` and `u64` (2**70) the nearest float. (serde_json's
    /// `arbitrary_precision` would hold them, but Cargo turns the feature on for the whole
    /// dependency graph, where it breaks `#[serde(flatten)]` and untagged enums with
    /// numbers, such as the safetensors header that burn-store reads.)
    pub(crate) fn to_value(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Int(i) => Value::from(*i),
            Json::BigInt(digits) => match digits.parse::<u64>() {
                Ok(u) => Value::from(u),
                Err(_) => serde_json::Number::from_f64(self.as_f64().unwrap_or(f64::NAN))
                    .map_or(Value::Null, Value::Number),
            },
            Json::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Json::Str(s) => Value::String(s.clone()),
            Json::Array(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
        }
    }

    /// Converts from a `serde_json::Value`.
    pub(crate) fn from_value(value: &serde_json::Value) -> Json {
        use serde_json::Value;
        match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Json::Int(i),
                (None, Some(u)) => Json::BigInt(u.to_string()),
                (None, None) => Json::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => Json::Str(s.clone()),
            Value::Array(items) => Json::Array(items.iter().map(Json::from_value).collect()),
            Value::Object(fields) => Json::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), Json::from_value(v)))
                    .collect(),
            ),
        }
    }

    /// Writes like `json.dumps(value, separators=(",", ":"))` when `compact`, else like
    /// `json.dumps(value)` (separators `", "` and `": "`).
    pub(crate) fn write(&self, out: &mut String, compact: bool) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(true) => out.push_str("true"),
            Json::Bool(false) => out.push_str("false"),
            Json::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Json::BigInt(digits) => out.push_str(digits),
            Json::Float(f) => write_python_float(out, *f),
            Json::Str(s) => write_python_string(out, s),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(if compact { "," } else { ", " });
                    }
                    item.write(out, compact);
                }
                out.push(']');
            }
            Json::Object(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(if compact { "," } else { ", " });
                    }
                    write_python_string(out, key);
                    out.push_str(if compact { ":" } else { ": " });
                    value.write(out, compact);
                }
                out.push('}');
            }
        }
    }

    /// The text `json.dumps` would produce (see [`Json::write`]).
    pub(crate) fn to_string(&self, compact: bool) -> String {
        let mut out = String::new();
        self.write(&mut out, compact);
        out
    }

    /// Parses one JSON document, accepting Python's `NaN`, `Infinity` and `-Infinity`.
    pub(crate) fn parse(text: &str) -> Result<Json, String> {
        let mut parser = Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        };
        parser.skip_ws();
        let value = parser.value(0)?;
        parser.skip_ws();
        if parser.pos != parser.bytes.len() {
            return Err(format!("trailing characters at byte {}", parser.pos));
        }
        Ok(value)
    }
}

/// Python's `repr(float)`: the shortest digits that read back, fixed notation for
/// exponents in `[-4, 16)` with a `.0` on integral values, scientific outside (`1e-05`,
/// `1.5e+16`), and `nan`, `inf`, `-inf`. What Optuna's CLI and journal print for a float.
///
/// ```
/// use saturate_study::python_float_repr;
/// assert_eq!(python_float_repr(1e-5), "1e-05");
/// assert_eq!(python_float_repr(0.1 + 0.2), "0.30000000000000004");
/// assert_eq!(python_float_repr(3.0), "3.0");
/// assert_eq!(python_float_repr(f64::NEG_INFINITY), "-inf");
/// ```
pub fn python_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let mut out = String::new();
    write_finite_float(&mut out, x);
    out
}

/// Writes a float exactly as Python's `json.dumps` does: [`python_float_repr`] for finite
/// values, and the bare tokens `NaN`, `Infinity`, `-Infinity`.
pub(crate) fn write_python_float(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("NaN");
    } else if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        write_finite_float(out, x);
    }
}

fn write_finite_float(out: &mut String, x: f64) {
    if x == 0.0 {
        out.push_str(if x.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    // Rust's `{:e}` gives the shortest round-trip digits, as Python's repr does; only
    // the layout differs.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exponent) = sci
        .split_once('e')
        .expect("LowerExp always has an exponent");
    let exponent: i32 = exponent.parse().expect("LowerExp exponent is an integer");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let point = exponent + 1; // position of the decimal point relative to the digits
    if x < 0.0 {
        out.push('-');
    }
    if -4 < point && point <= 16 {
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-point) as usize));
            out.push_str(&digits);
        } else if point as usize >= digits.len() {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', point as usize - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(
            out,
            "e{}{:02}",
            if exponent < 0 { '-' } else { '+' },
            exponent.abs()
        );
    }
}

/// A string quoted as Python's `json.dumps` quotes it with its default `ensure_ascii=True`:
/// what Optuna writes in a journal and its CLI prints.
///
/// ```
/// assert_eq!(saturate_study::python_json_string("é\"x"), r#""\u00e9\"x""#);
/// ```
pub fn python_json_string(s: &str) -> String {
    let mut out = String::new();
    write_python_string(&mut out, s);
    out
}

/// Writes a string as `json.dumps` does with its default `ensure_ascii=True`.
fn write_python_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

const MAX_DEPTH: usize = 512;

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn error(&self, what: &str) -> String {
        format!("{what} at byte {}", self.pos)
    }

    fn eat(&mut self, literal: &str) -> bool {
        if self.bytes[self.pos..].starts_with(literal.as_bytes()) {
            self.pos += literal.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nesting too deep"));
        }
        match self.bytes.get(self.pos) {
            None => Err(self.error("unexpected end")),
            Some(b'{') => {
                self.pos += 1;
                let mut fields = Vec::new();
                self.skip_ws();
                if self.eat("}") {
                    return Ok(Json::Object(fields));
                }
                loop {
                    self.skip_ws();
                    if self.bytes.get(self.pos) != Some(&b'"') {
                        return Err(self.error("expected a key"));
                    }
                    let key = self.string()?;
                    self.skip_ws();
                    if !self.eat(":") {
                        return Err(self.error("expected ':'"));
                    }
                    self.skip_ws();
                    let value = self.value(depth + 1)?;
                    fields.push((key, value));
                    self.skip_ws();
                    if self.eat(",") {
                        continue;
                    }
                    if self.eat("}") {
                        return Ok(Json::Object(fields));
                    }
                    return Err(self.error("expected ',' or '}'"));
                }
            }
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                self.skip_ws();
                if self.eat("]") {
                    return Ok(Json::Array(items));
                }
                loop {
                    self.skip_ws();
                    items.push(self.value(depth + 1)?);
                    self.skip_ws();
                    if self.eat(",") {
                        continue;
                    }
                    if self.eat("]") {
                        return Ok(Json::Array(items));
                    }
                    return Err(self.error("expected ',' or ']'"));
                }
            }
            Some(b'"') => self.string().map(Json::Str),
            Some(b't') if self.eat("true") => Ok(Json::Bool(true)),
            Some(b'f') if self.eat("false") => Ok(Json::Bool(false)),
            Some(b'n') if self.eat("null") => Ok(Json::Null),
            Some(b'N') if self.eat("NaN") => Ok(Json::Float(f64::NAN)),
            Some(b'I') if self.eat("Infinity") => Ok(Json::Float(f64::INFINITY)),
            Some(b'-') if self.eat("-Infinity") => Ok(Json::Float(f64::NEG_INFINITY)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("unexpected character")),
        }
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.pos;
        let mut is_float = false;
        while let Some(&b) = self.bytes.get(self.pos) {
            match b {
                b'0'..=b'9' | b'-' | b'+' => {}
                b'.' | b'e' | b'E' => is_float = true,
                _ => break,
            }
            self.pos += 1;
        }
        let text = &self.text[start..self.pos];
        if !is_float {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Json::Int(i));
            }
            let digits = text.strip_prefix('-').unwrap_or(text);
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                return Ok(Json::BigInt(text.to_owned()));
            }
        }
        text.parse::<f64>()
            .map(Json::Float)
            .map_err(|_| format!("invalid number `{text}` at byte {start}"))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let hex = self
            .bytes
            .get(self.pos..self.pos + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.error("invalid \\u escape"))?;
        self.pos += 4;
        Ok(hex)
    }

    fn string(&mut self) -> Result<String, String> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(&b) = self.bytes.get(self.pos) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // Both ends are at ASCII bytes, so at character boundaries.
            out.push_str(&self.text[start..self.pos]);
            match self.bytes.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let escape = *self
                        .bytes
                        .get(self.pos)
                        .ok_or_else(|| self.error("unexpected end"))?;
                    self.pos += 1;
                    match escape {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'u' => {
                            let first = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&first) && self.eat("\\u") {
                                let second = self.hex4()?;
                                0x10000 + ((first - 0xd800) << 10) + (second.wrapping_sub(0xdc00))
                            } else {
                                first
                            };
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        _ => return Err(self.error("invalid escape")),
                    }
                }
                _ => return Err(self.error("unterminated string")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_python_repr() {
        let cases = [
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (0.1, "0.1"),
            (5.0, "5.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e300, "1.5e+300"),
            (-2.5e-7, "-2.5e-07"),
            (123.456, "123.456"),
            (0.000495, "0.000495"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (-0.0, "-0.0"),
        ];
        for (x, expected) in cases {
            let mut out = String::new();
            write_python_float(&mut out, x);
            assert_eq!(out, expected, "{x:e}");
        }
    }

    #[test]
    fn round_trips_python_dialect() {
        let text =
            r#"{"a":[1,1.0,NaN,-Infinity,Infinity,null,true,"\u00e9\ud83d\ude00\n"],"b":{}}"#;
        let value = Json::parse(text).unwrap();
        let Json::Array(items) = value.get("a").unwrap() else {
            panic!()
        };
        assert_eq!(items[0], Json::Int(1));
        assert_eq!(items[1], Json::Float(1.0));
        assert!(items[2].as_f64().unwrap().is_nan());
        assert_eq!(items[7], Json::Str("é😀\n".into()));
        assert_eq!(value.to_string(true), text);
        assert_eq!(
            Json::parse(r#"{"a": 1, "b": [2, 3]}"#)
                .unwrap()
                .to_string(false),
            r#"{"a": 1, "b": [2, 3]}"#
        );
    }

    #[test]
    fn integers_outside_i64_stay_exact() {
        // 2**64 - 1, 2**70 and -(2**63) - 1, as Python's `json.dumps` writes them.
        for digits in [
            "18446744073709551615",
            "1180591620717411303424",
            "-9223372036854775809",
        ] {
            let text = format!("{{\"a\":[{digits},{digits}.0]}}");
            let value = Json::parse(&text).unwrap();
            let Json::Array(items) = value.get("a").unwrap() else {
                panic!()
            };
            assert_eq!(items[0], Json::BigInt(digits.into()));
            assert!(matches!(items[1], Json::Float(_)));
            assert_eq!(
                value.to_string(true).split_once('[').unwrap().1,
                format!("{digits},{}]}}", items[1].to_string(true))
            );
        }
        // u64 goes through serde_json's Value both ways.
        let value = serde_json::Value::from(u64::MAX);
        let json = Json::from_value(&value);
        assert_eq!(json.to_string(true), "18446744073709551615");
        assert_eq!(json.to_value(), value);
        assert_eq!(
            Json::BigInt("1180591620717411303424".into()).to_value(),
            serde_json::json!(1180591620717411303424.0)
        );
        for bad in ["1-2", "--1", "-"] {
            assert!(Json::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["{", "{\"a\":}", "[1,]", "nul", "\"abc", "1 2", "{\"a\":1"] {
            assert!(Json::parse(bad).is_err(), "{bad}");
        }
    }
}
