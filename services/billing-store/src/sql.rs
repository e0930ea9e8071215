//! Batched statements that work on both backends: numbered `$n` placeholders, rows chunked
//! below SQLite's and PostgreSQL's parameter limits.

use sqlx::any::AnyArguments;
use sqlx::query::Query;
use sqlx::{Any, AnyConnection};

/// Most parameters in one statement (SQLite allows 32,766; PostgreSQL 65,535).
const MAX_PARAMS: usize = 30_000;

/// A bindable value.
#[derive(Debug, Clone)]
pub enum Val {
    I64(i64),
    OptI64(Option<i64>),
    Text(String),
    OptText(Option<String>),
    Bytes(Vec<u8>),
}

pub fn bind<'q>(q: Query<'q, Any, AnyArguments<'q>>, v: Val) -> Query<'q, Any, AnyArguments<'q>> {
    match v {
        Val::I64(x) => q.bind(x),
        Val::OptI64(x) => q.bind(x),
        Val::Text(x) => q.bind(x),
        Val::OptText(x) => q.bind(x),
        Val::Bytes(x) => q.bind(x),
    }
}

/// `($1, $2), ($3, $4), ...` for `rows` rows of `cols` columns; `(?, ?), (?, ?), ...` when
/// `anonymous` (SQLite). SQLite finds a numbered parameter's name by walking the statement's
/// list of names (`sqlite3_bind_parameter_name`, which sqlx calls once per parameter), so
/// binding n numbered parameters costs n²/2 steps: at 30,000 a statement that was 39% of
/// the CPU of an HTTP ingest on SQLite. Anonymous parameters have no name to look up.
fn values(rows: usize, cols: usize, anonymous: bool) -> String {
    let mut s = String::with_capacity(rows * cols * 5);
    for r in 0..rows {
        if r > 0 {
            s.push(',');
        }
        s.push('(');
        for c in 0..cols {
            if c > 0 {
                s.push(',');
            }
            if anonymous {
                s.push('?');
            } else {
                s.push('$');
                s.push_str(&(r * cols + c + 1).to_string());
            }
        }
        s.push(')');
    }
    s
}

/// Runs `head VALUES (...), (...) tail` over `rows` in chunks. `head` and `tail` are
/// statement files (`queries/`), trimmed here; `tail` may be empty; neither has parameters
/// of its own (the rows' are the statement's only ones).
pub async fn insert_rows(
    conn: &mut AnyConnection,
    head: &str,
    tail: &str,
    rows: Vec<Vec<Val>>,
) -> Result<u64, sqlx::Error> {
    let Some(cols) = rows.first().map(Vec::len) else {
        return Ok(0);
    };
    let per = (MAX_PARAMS / cols).max(1);
    let anonymous = conn.backend_name() == "SQLite";
    let mut affected = 0;
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<Vec<Val>> = rows.by_ref().take(per).collect();
        let sql = format!(
            "{} values {} {}",
            head.trim(),
            values(chunk.len(), cols, anonymous),
            tail.trim()
        );
        let mut q = sqlx::query(&sql);
        for v in chunk.into_iter().flatten() {
            q = bind(q, v);
        }
        affected += q.execute(&mut *conn).await?.rows_affected();
    }
    Ok(affected)
}

/// The filter of the one account bound as `$1`, for statements that take a `{filter}` (the
/// filter of many is [`in_json_array`]'s).
pub(crate) const ONE_ACCOUNT: &str = "account = $1";

/// Most values looked up with one query.
pub const MAX_IN_LIST: usize = 1_000;

/// `column` is one of the strings of the JSON array bound as `$1`: one parameter for up to a
/// thousand values, written so that both databases look them up through the column's index
/// (PostgreSQL plans `in (subquery)` as a hash join over the whole table; `= any(array)` is an
/// index scan).
pub(crate) fn in_json_array(column: &str, backend: crate::Backend) -> String {
    match backend {
        crate::Backend::Postgres => {
            format!("{column} = any(array(select jsonb_array_elements_text(cast($1 as jsonb))))")
        }
        crate::Backend::Sqlite => format!("{column} in (select value from json_each($1))"),
    }
}

#[cfg(test)]
mod tests {
    use super::values;

    #[test]
    fn rows_of_numbered_or_anonymous_parameters() {
        assert_eq!(values(2, 2, false), "($1,$2),($3,$4)");
        assert_eq!(values(2, 2, true), "(?,?),(?,?)");
    }
}
