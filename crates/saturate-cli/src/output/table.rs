//! Optuna's `_dump_table`: ASCII boxes, numbers right-aligned, widths in code points.

use super::value::Cell;

/// The table of `rows` (each in `header` order; `None` for a missing cell).
pub fn dumps(rows: &[Vec<Option<Cell>>], header: &[String]) -> String {
    let mut separator = String::from("+");
    let mut header_line = String::from("|");
    let mut row_lines: Vec<String> = rows.iter().map(|_| String::from("|")).collect();
    for (column, name) in header.iter().enumerate() {
        let cells: Vec<Option<&Cell>> = rows
            .iter()
            .map(|r| r[column].as_ref().filter(|c| **c != Cell::None))
            .collect();
        let numeric = cells.iter().flatten().all(|c| c.is_numeric());
        let width = cells
            .iter()
            .map(|c| c.map_or(4, |c| c.py_str().chars().count()))
            .chain(std::iter::once(name.chars().count()))
            .max()
            .unwrap_or(0);
        separator.push_str(&"-".repeat(width + 2));
        separator.push('+');
        header_line.push_str(&format!(" {} |", align(name, width, numeric)));
        for (line, cell) in row_lines.iter_mut().zip(&cells) {
            let text = match cell {
                Some(c) => align(&c.py_str(), width, numeric),
                None => " ".repeat(width),
            };
            line.push_str(&format!(" {text} |"));
        }
    }
    let mut out = vec![separator.clone(), header_line, separator.clone()];
    out.extend(row_lines);
    out.push(separator);
    out.join("\n")
}

fn align(text: &str, width: usize, right: bool) -> String {
    let pad = " ".repeat(width.saturating_sub(text.chars().count()));
    if right {
        format!("{pad}{text}")
    } else {
        format!("{text}{pad}")
    }
}
