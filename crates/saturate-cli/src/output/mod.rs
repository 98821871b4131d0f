//! Optuna's CLI output: records keyed by `(attribute, key)` columns, turned into rows
//! (nested or `--flatten`ed) and printed as `table`, `json`, `yaml` or `value`.

mod json;
mod table;
mod value;
mod yaml;

use std::collections::HashMap;

use clap::ValueEnum;

pub use json::dumps as json_dumps;
pub use value::{py_float_repr, Cell};

/// An output format (`-f`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Space-separated values, one record per line.
    Value,
    /// An ASCII table.
    Table,
    /// JSON, as Python's `json.dumps` writes it.
    Json,
    /// YAML, as PyYAML's `safe_dump` writes it.
    Yaml,
}

/// The second part of a column: none, a name (`params`, `user_attrs`) or an index
/// (`values`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    /// A plain column (`number`, `state`).
    None,
    /// An index into a list column (`values_0`).
    Index(usize),
    /// A name inside a dict column (`params_x`).
    Name(String),
}

/// A column: an attribute and a key inside it.
pub type Column = (String, Key);

/// One record: a cell per column it has.
pub type Record = HashMap<Column, Cell>;

/// Prints records (a list, or one record when `single`) in Optuna's shapes.
pub fn format_output(
    records: &[Record],
    columns: &[Column],
    format: Format,
    flatten: bool,
    single: bool,
) -> String {
    let (rows, header) = convert_to_dict(records, columns, flatten);
    let text = match format {
        Format::Value => rows
            .iter()
            .map(|row| {
                header
                    .iter()
                    .map(|h| match lookup(row, h) {
                        Some(c) if *c != Cell::None => c.py_str(),
                        _ => String::new(),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Format::Table => {
            let cells: Vec<Vec<Option<Cell>>> = rows
                .iter()
                .map(|row| header.iter().map(|h| lookup(row, h).cloned()).collect())
                .collect();
            table::dumps(&cells, &header)
        }
        Format::Json | Format::Yaml => {
            let cell = if single {
                Cell::Map(rows.into_iter().next().unwrap_or_default())
            } else {
                Cell::List(rows.into_iter().map(Cell::Map).collect())
            };
            if format == Format::Json {
                json::dumps(&cell)
            } else {
                yaml::dumps(&cell)
            }
        }
    };
    text.trim().to_string()
}

fn lookup<'a>(row: &'a [(String, Cell)], name: &str) -> Option<&'a Cell> {
    row.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

fn insert(row: &mut Vec<(String, Cell)>, key: String, value: Cell) {
    match row.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = value,
        None => row.push((key, value)),
    }
}

fn sequence(cell: &Cell) -> Option<&[Cell]> {
    match cell {
        Cell::List(items) | Cell::Tuple(items) => Some(items),
        _ => None,
    }
}

/// Optuna's `_convert_to_dict`: rows in header order, and the header.
#[allow(clippy::type_complexity)]
fn convert_to_dict(
    records: &[Record],
    columns: &[Column],
    flatten: bool,
) -> (Vec<Vec<(String, Cell)>>, Vec<String>) {
    let mut header = Vec::new();
    let mut rows = Vec::new();
    let flat_name = |(attr, key): &Column| match key {
        Key::None => attr.clone(),
        Key::Index(i) => format!("{attr}_{i}"),
        Key::Name(n) => format!("{attr}_{n}"),
    };
    if flatten {
        let is_list_column = |column: &Column| {
            records
                .iter()
                .any(|r| r.get(column).is_some_and(|c| sequence(c).is_some()))
        };
        for column in columns {
            if column.1 != Key::None {
                header.push(flat_name(column));
            } else if is_list_column(column) {
                let max_len = records
                    .iter()
                    .filter_map(|r| r.get(column).and_then(sequence).map(<[Cell]>::len))
                    .max()
                    .unwrap_or(0);
                header.extend((0..max_len).map(|i| format!("{}_{i}", column.0)));
            } else {
                header.push(column.0.clone());
            }
        }
        for record in records {
            let mut row = Vec::new();
            for column in columns {
                let Some(value) = record.get(column) else {
                    continue;
                };
                if column.1 != Key::None {
                    insert(&mut row, flat_name(column), value.clone());
                } else if is_list_column(column) {
                    for (i, v) in sequence(value).unwrap_or(&[]).iter().enumerate() {
                        insert(&mut row, format!("{}_{i}", column.0), v.clone());
                    }
                } else {
                    insert(&mut row, column.0.clone(), value.clone());
                }
            }
            rows.push(row);
        }
    } else {
        for (attr, _) in columns {
            if !header.contains(attr) {
                header.push(attr.clone());
            }
        }
        for record in records {
            let mut row: Vec<(String, Cell)> = header
                .iter()
                .map(|h| (h.clone(), Cell::Map(Vec::new())))
                .collect();
            for column in columns {
                let Some(value) = record.get(column) else {
                    continue;
                };
                let slot = &mut row
                    .iter_mut()
                    .find(|(k, _)| *k == column.0)
                    .expect("every attribute is in the header")
                    .1;
                match &column.1 {
                    Key::Index(i) => {
                        if !matches!(slot, Cell::List(_)) {
                            *slot = Cell::List(Vec::new());
                        }
                        let Cell::List(items) = slot else {
                            unreachable!("just made a list")
                        };
                        if items.len() <= *i {
                            items.resize(i + 1, Cell::None);
                        }
                        items[*i] = value.clone();
                    }
                    Key::Name(name) => {
                        if let Cell::Map(entries) = slot {
                            entries.push((name.clone(), value.clone()));
                        }
                    }
                    Key::None => *slot = value.clone(),
                }
            }
            rows.push(row);
        }
    }
    (rows, header)
}
