//! PyYAML's `safe_dump` (block style, sorted keys, ASCII only) for the shapes the CLI prints.

use super::value::{py_float_repr, Cell};

/// `yaml.safe_dump(cell)` without the trailing newline.
pub fn dumps(cell: &Cell) -> String {
    let mut lines = Vec::new();
    match cell {
        Cell::List(items) | Cell::Tuple(items) if !items.is_empty() => {
            sequence(items, 0, &mut lines)
        }
        Cell::Map(entries) if !entries.is_empty() => mapping(entries, 0, &mut lines),
        other => lines.push(scalar(other)),
    }
    lines.join("\n")
}

fn pad(indent: usize) -> String {
    " ".repeat(indent)
}

fn is_block(cell: &Cell) -> bool {
    match cell {
        Cell::List(items) | Cell::Tuple(items) => !items.is_empty(),
        Cell::Map(entries) => !entries.is_empty(),
        _ => false,
    }
}

fn mapping(entries: &[(String, Cell)], indent: usize, lines: &mut Vec<String>) {
    let mut sorted: Vec<&(String, Cell)> = entries.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    for (key, value) in sorted {
        let key = string(key);
        match value {
            Cell::Map(inner) if !inner.is_empty() => {
                lines.push(format!("{}{key}:", pad(indent)));
                mapping(inner, indent + 2, lines);
            }
            // PyYAML does not indent a sequence inside a mapping.
            Cell::List(items) | Cell::Tuple(items) if !items.is_empty() => {
                lines.push(format!("{}{key}:", pad(indent)));
                sequence(items, indent, lines);
            }
            scalar_value => lines.push(format!("{}{key}: {}", pad(indent), scalar(scalar_value))),
        }
    }
}

fn sequence(items: &[Cell], indent: usize, lines: &mut Vec<String>) {
    for item in items {
        if is_block(item) {
            // The first line of the nested block shares the line of the dash.
            let mut nested = Vec::new();
            match item {
                Cell::Map(entries) => mapping(entries, indent + 2, &mut nested),
                Cell::List(items) | Cell::Tuple(items) => sequence(items, indent + 2, &mut nested),
                _ => unreachable!("is_block"),
            }
            let first = nested.remove(0);
            lines.push(format!("{}- {}", pad(indent), &first[indent + 2..]));
            lines.extend(nested);
        } else {
            lines.push(format!("{}- {}", pad(indent), scalar(item)));
        }
    }
}

fn scalar(cell: &Cell) -> String {
    match cell {
        Cell::None => "null".into(),
        Cell::Bool(b) => if *b { "true" } else { "false" }.into(),
        Cell::Int(i) => i.to_string(),
        Cell::Float(f) if f.is_nan() => ".nan".into(),
        Cell::Float(f) if f.is_infinite() => if *f > 0.0 { ".inf" } else { "-.inf" }.into(),
        Cell::Float(f) => {
            let repr = py_float_repr(*f);
            if !repr.contains('.') && repr.contains('e') {
                repr.replacen('e', ".0e", 1)
            } else {
                repr
            }
        }
        Cell::Str(s) => string(s),
        Cell::List(_) | Cell::Tuple(_) => "[]".into(),
        Cell::Map(_) => "{}".into(),
    }
}

/// A string as PyYAML emits it: plain when that reads back as the same string, single-quoted
/// when it would read as another type or holds indicators, double-quoted with escapes when
/// it holds characters outside printable ASCII.
fn string(s: &str) -> String {
    if s.chars().any(|c| !(' '..='~').contains(&c)) {
        return double_quoted(s);
    }
    if needs_quotes(s) {
        return format!("'{}'", s.replace('\'', "''"));
    }
    s.to_string()
}

fn needs_quotes(s: &str) -> bool {
    if s.is_empty() || s.starts_with(' ') || s.ends_with(' ') {
        return true;
    }
    let first = s.chars().next().expect("not empty");
    if "-?:,[]{}#&*!|>'\"%@`".contains(first)
        && !(matches!(first, '-' | '?' | ':') && s.len() > 1 && !s[1..].starts_with(' '))
    {
        return true;
    }
    if s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return true;
    }
    if s.contains(['[', ']', '{', '}', ',']) && first != '-' {
        // Flow indicators are allowed in block plain scalars; PyYAML still quotes them.
        return true;
    }
    resolves_to_non_string(s)
}

/// Whether YAML 1.1's implicit resolvers (PyYAML's) read `s` as null, bool, int, float or
/// timestamp.
fn resolves_to_non_string(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "~" | "null" | "yes" | "no" | "true" | "false" | "on" | "off" | "y" | "n"
    ) || matches!(lower.as_str(), ".inf" | "-.inf" | "+.inf" | ".nan")
    {
        return true;
    }
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    let digits_or = |extra: &str| {
        !body.is_empty()
            && body
                .chars()
                .all(|c| c.is_ascii_digit() || extra.contains(c))
    };
    if digits_or("_") && body.starts_with(|c: char| c.is_ascii_digit()) {
        return true;
    }
    if body.starts_with("0x") || body.starts_with("0b") {
        return true;
    }
    // Floats: digits with a point and/or an exponent.
    if body.contains(['.', 'e', 'E'])
        && body.chars().any(|c| c.is_ascii_digit())
        && body
            .chars()
            .all(|c| c.is_ascii_digit() || "._eE+-".contains(c))
        && (body.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
    {
        return true;
    }
    if sexagesimal(body) {
        return true;
    }
    // Timestamps: 2024-01-01 ...
    let bytes = s.as_bytes();
    bytes.len() >= 10
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4] == b'-'
        && bytes[5..7].iter().all(u8::is_ascii_digit)
        && bytes[7] == b'-'
        && bytes[8..10].iter().all(u8::is_ascii_digit)
}

/// YAML 1.1's base-60 numbers (`0:00:00.034282`, `1:30`), which PyYAML resolves as int or
/// float: a durations column is therefore quoted.
fn sexagesimal(body: &str) -> bool {
    let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
    let mut parts = whole.split(':');
    let head = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    !rest.is_empty()
        && !head.is_empty()
        && head.chars().all(|c| c.is_ascii_digit() || c == '_')
        && rest.iter().all(|p| {
            (1..=2).contains(&p.len())
                && p.chars().all(|c| c.is_ascii_digit())
                && p.parse::<u32>().is_ok_and(|v| v < 60)
        })
        && fraction.chars().all(|c| c.is_ascii_digit() || c == '_')
}

fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (' '..='~').contains(&c) => out.push(c),
            c if (c as u32) <= 0xff => out.push_str(&format!("\\x{:02X}", c as u32)),
            c if (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push_str(&format!("\\U{:08X}", c as u32)),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_as_pyyaml() {
        let record = Cell::Map(vec![
            ("name".into(), Cell::str("ニューラル")),
            (
                "direction".into(),
                Cell::Tuple(vec![Cell::str("MINIMIZE"), Cell::str("MAXIMIZE")]),
            ),
            ("n_trials".into(), Cell::Int(2)),
            ("datetime_start".into(), Cell::str("2026-12-01 00:30:04")),
            ("user_attrs".into(), Cell::Map(vec![])),
            ("value".into(), Cell::Float(1e-5)),
            (
                "params".into(),
                Cell::Map(vec![("c".into(), Cell::str("a"))]),
            ),
        ]);
        let expected = "\
- datetime_start: '2026-12-01 00:30:04'
  direction:
  - MINIMIZE
  - MAXIMIZE
  n_trials: 2
  name: \"\\u30CB\\u30E5\\u30FC\\u30E9\\u30EB\"
  params:
    c: a
  user_attrs: {}
  value: 1.0e-05";
        assert_eq!(dumps(&Cell::List(vec![record])), expected);
    }

    #[test]
    fn quotes_strings_that_read_as_other_types() {
        for s in [
            "1",
            "1.5",
            "true",
            "null",
            "",
            "a: b",
            "-1e3",
            "0:00:00.034282",
        ] {
            assert!(string(s).starts_with('\''), "{s}");
        }
        for s in ["a", "COMPLETE", "0:00:00.034282x", "hi"] {
            assert_eq!(string(s), s);
        }
    }
}
