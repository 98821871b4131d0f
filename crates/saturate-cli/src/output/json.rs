//! Python's `json.dumps` (default separators, `ensure_ascii`), so output matches Optuna's byte
//! for byte.

use super::value::{py_float_repr, Cell};

/// `json.dumps(cell)`.
pub fn dumps(cell: &Cell) -> String {
    let mut out = String::new();
    write(cell, &mut out);
    out
}

fn write(cell: &Cell, out: &mut String) {
    match cell {
        Cell::None => out.push_str("null"),
        Cell::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Cell::Int(i) => out.push_str(&i.to_string()),
        Cell::Float(f) if f.is_nan() => out.push_str("NaN"),
        Cell::Float(f) if f.is_infinite() => {
            out.push_str(if *f > 0.0 { "Infinity" } else { "-Infinity" })
        }
        Cell::Float(f) => out.push_str(&py_float_repr(*f)),
        Cell::Str(s) => write_str(s, out),
        Cell::List(items) | Cell::Tuple(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(item, out);
            }
            out.push(']');
        }
        Cell::Map(entries) => {
            out.push('{');
            for (i, (key, value)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str(key, out);
                out.push_str(": ");
                write(value, out);
            }
            out.push('}');
        }
    }
}

fn write_str(s: &str, out: &mut String) {
    out.push_str(&saturate_study::python_json_string(s));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_python_does() {
        let cell = Cell::Map(vec![
            ("name".into(), Cell::str("ニューラル \"x\" 🙂")),
            (
                "v".into(),
                Cell::List(vec![Cell::Float(1e-5), Cell::Float(f64::NAN)]),
            ),
        ]);
        assert_eq!(
            dumps(&cell),
            r#"{"name": "\u30cb\u30e5\u30fc\u30e9\u30eb \"x\" \ud83d\ude42", "v": [1e-05, NaN]}"#
        );
    }
}
