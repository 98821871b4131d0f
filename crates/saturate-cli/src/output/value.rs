//! The values the CLI prints, with Python's `str` / `repr` so that tables read as Optuna's.

use serde_json::Value;

/// One printable value: what Optuna's CLI puts in a record (after its `_format_value`).
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Python's `None`.
    None,
    /// A boolean.
    Bool(bool),
    /// An integer (wide enough for the unsigned 64-bit values JSON attributes may hold).
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A list.
    List(Vec<Cell>),
    /// A tuple (printed `('a',)` in tables, as a list in JSON and YAML).
    Tuple(Vec<Cell>),
    /// A dict, in insertion order.
    Map(Vec<(String, Cell)>),
}

impl Cell {
    /// A string cell.
    pub fn str(s: impl Into<String>) -> Self {
        Cell::Str(s.into())
    }

    /// Whether Optuna's table aligns it right (None, bool, int, float).
    pub fn is_numeric(&self) -> bool {
        matches!(self, Cell::Bool(_) | Cell::Int(_) | Cell::Float(_))
    }

    /// Python's `str(value)`.
    pub fn py_str(&self) -> String {
        match self {
            Cell::Str(s) => s.clone(),
            other => other.py_repr(),
        }
    }

    /// Python's `repr(value)`.
    pub fn py_repr(&self) -> String {
        match self {
            Cell::None => "None".into(),
            Cell::Bool(b) => if *b { "True" } else { "False" }.into(),
            Cell::Int(i) => i.to_string(),
            Cell::Float(f) => py_float_repr(*f),
            Cell::Str(s) => py_str_repr(s),
            Cell::List(items) => format!("[{}]", join_repr(items)),
            Cell::Tuple(items) if items.len() == 1 => format!("({},)", items[0].py_repr()),
            Cell::Tuple(items) => format!("({})", join_repr(items)),
            Cell::Map(entries) => format!(
                "{{{}}}",
                entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", py_str_repr(k), v.py_repr()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

impl From<&Value> for Cell {
    fn from(value: &Value) -> Self {
        match value {
            Value::Null => Cell::None,
            Value::Bool(b) => Cell::Bool(*b),
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Cell::Int(i as i128),
                (_, Some(u)) => Cell::Int(u as i128),
                _ => Cell::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => Cell::Str(s.clone()),
            Value::Array(items) => Cell::List(items.iter().map(Cell::from).collect()),
            Value::Object(map) => Cell::Map(
                map.iter()
                    .map(|(k, v)| (k.clone(), Cell::from(v)))
                    .collect(),
            ),
        }
    }
}

fn join_repr(items: &[Cell]) -> String {
    items
        .iter()
        .map(Cell::py_repr)
        .collect::<Vec<_>>()
        .join(", ")
}

pub use saturate_study::python_float_repr as py_float_repr;

/// Python's `repr(str)`: single quotes unless the text holds `'` and no `"`.
fn py_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_python_repr() {
        let cases = [
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1.0, "1.0"),
            (-2.5, "-2.5"),
            (324.83503450866755, "324.83503450866755"),
            (8.536916958038759e-05, "8.536916958038759e-05"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1e15, "1000000000000000.0"),
            (123456.0, "123456.0"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (f64::INFINITY, "inf"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ];
        for (value, python) in cases {
            assert_eq!(py_float_repr(value), python, "{value:e}");
        }
    }

    #[test]
    fn containers_print_as_python_repr() {
        let cell = Cell::Map(vec![
            ("c".into(), Cell::str("a")),
            ("n".into(), Cell::Int(2)),
            ("it's".into(), Cell::None),
        ]);
        assert_eq!(cell.py_str(), "{'c': 'a', 'n': 2, \"it's\": None}");
        assert_eq!(
            Cell::Tuple(vec![Cell::str("MINIMIZE")]).py_str(),
            "('MINIMIZE',)"
        );
        assert_eq!(
            Cell::List(vec![Cell::Float(2.0), Cell::Float(2.5)]).py_str(),
            "[2.0, 2.5]"
        );
    }
}
