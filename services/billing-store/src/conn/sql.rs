//! Batched statements that work on both backends (which form a batch takes is
//! `Backend::row_batches`, `dialect.rs`). On PostgreSQL a batch of rows is one
//! round trip per table: a binary `COPY` for plain inserts, and for inserts with an
//! `on conflict` tail one statement with one native array per column (`insert ... select *
//! from unnest($1, ...)`), one statement text per table, prepared once per connection. On
//! SQLite, rows of anonymous `?` placeholders, chunked below its parameter limit.
//!
//! Measured on the month-long 64-GPU account posted over HTTP into PostgreSQL (553k events,
//! docs/benchmarks.md): rows of 30,000 numbered parameters took 2.3 – 2.6 s to append the log
//! and 3.8 – 4.0 s for the side tables; `unnest` of arrays 4.8 s and 2.6 s (a `bytea[]` of
//! 1,000 payloads is slow to build); binary `COPY` 1.5 – 1.7 s and 1.6 – 1.7 s.

use crate::conn::db::Conn;
pub use crate::conn::db::Val;
use crate::conn::dialect::RowBatches;

/// Most parameters in one statement (SQLite allows 32,766; PostgreSQL 65,535).
const MAX_PARAMS: usize = 30_000;

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
    conn: &mut dyn Conn,
    head: &str,
    tail: &str,
    rows: Vec<Vec<Val>>,
) -> Result<u64, sqlx::Error> {
    let Some(cols) = rows.first().map(Vec::len) else {
        return Ok(0);
    };
    match conn.backend().row_batches(!tail.trim().is_empty()) {
        RowBatches::BinaryCopy => {
            copy_rows_postgres(crate::conn::dialect::postgres(conn)?, head, rows, cols).await
        }
        RowBatches::ColumnArrays => {
            insert_rows_postgres(
                crate::conn::dialect::postgres(conn)?,
                head,
                tail,
                rows,
                cols,
            )
            .await
        }
        RowBatches::Placeholders => insert_rows_placeholders(conn, head, tail, rows, cols).await,
    }
}

/// SQLite's batches: `head VALUES (?, ...), (?, ...) tail` in chunks below the parameter limit.
async fn insert_rows_placeholders(
    conn: &mut dyn Conn,
    head: &str,
    tail: &str,
    rows: Vec<Vec<Val>>,
    cols: usize,
) -> Result<u64, sqlx::Error> {
    let per = (MAX_PARAMS / cols).max(1);
    let mut affected = 0;
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<Vec<Val>> = rows.by_ref().take(per).collect();
        let sql = format!(
            "{} values {} {}",
            head.trim(),
            values(chunk.len(), cols, true),
            tail.trim()
        );
        let mut q = crate::conn::db::query(&sql);
        for v in chunk.into_iter().flatten() {
            q = q.bind(v);
        }
        affected += q.execute(&mut *conn).await?.rows_affected();
    }
    Ok(affected)
}

/// One column of a batch as a PostgreSQL array.
enum Column {
    I64(Vec<Option<i64>>),
    Text(Vec<Option<String>>),
    Bytes(Vec<Option<Vec<u8>>>),
    Bool(Vec<Option<bool>>),
    F64(Vec<Option<f64>>),
}

impl Column {
    fn of(first: &Val, rows: usize) -> Column {
        match first {
            Val::I64(_) | Val::OptI64(_) => Column::I64(Vec::with_capacity(rows)),
            Val::Text(_) | Val::OptText(_) => Column::Text(Vec::with_capacity(rows)),
            Val::Bytes(_) | Val::OptBytes(_) => Column::Bytes(Vec::with_capacity(rows)),
            Val::Bool(_) => Column::Bool(Vec::with_capacity(rows)),
            Val::F64(_) => Column::F64(Vec::with_capacity(rows)),
            // Not a column value: refused by `push`.
            Val::Strings(_) => Column::Text(Vec::with_capacity(rows)),
        }
    }

    fn sql_type(&self) -> &'static str {
        match self {
            Column::I64(_) => "bigint[]",
            Column::Text(_) => "text[]",
            Column::Bytes(_) => "bytea[]",
            Column::Bool(_) => "boolean[]",
            Column::F64(_) => "float8[]",
        }
    }

    /// Appends `v`; false when it is not of the column's type.
    /// Appends `v`, or gives it back when it is not of the column's type (shown in the error).
    fn push(&mut self, v: Val) -> Result<(), Val> {
        match (self, v) {
            (Column::I64(c), Val::I64(x)) => c.push(Some(x)),
            (Column::I64(c), Val::OptI64(x)) => c.push(x),
            (Column::Text(c), Val::Text(x)) => c.push(Some(x)),
            (Column::Text(c), Val::OptText(x)) => c.push(x),
            (Column::Bytes(c), Val::Bytes(x)) => c.push(Some(x)),
            (Column::Bytes(c), Val::OptBytes(x)) => c.push(x),
            (Column::Bool(c), Val::Bool(x)) => c.push(Some(x)),
            (Column::F64(c), Val::F64(x)) => c.push(Some(x)),
            (_, v) => return Err(v),
        }
        Ok(())
    }
}

/// `insert into t (a, b)` as `copy t (a, b) from stdin (format binary)`, the rows sent in
/// PostgreSQL's binary `COPY` format: the fastest way in for plain inserts (no `on conflict`).
/// Values are written as `bigint`, `text`, `bytea`, `boolean` or `float8`, which must be the
/// columns' types (binary `COPY` does not convert).
async fn copy_rows_postgres(
    pg: &mut sqlx::PgConnection,
    head: &str,
    rows: Vec<Vec<Val>>,
    cols: usize,
) -> Result<u64, sqlx::Error> {
    let (statement, buf) = copy_statement(head, &rows, cols)?;
    send_copy(pg, &statement, buf).await
}

/// The `copy ... from stdin (format binary)` statement of the plain insert `head`, and the
/// binary data of `rows`.
fn copy_statement(
    head: &str,
    rows: &[Vec<Val>],
    cols: usize,
) -> Result<(String, Vec<u8>), sqlx::Error> {
    // The statement files begin with `--` comments.
    let statement: Vec<&str> = head
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("--"))
        .collect();
    let statement = statement.join(" ");
    let Some(target) = statement.strip_prefix("insert into ") else {
        return Err(sqlx::Error::Encode(
            format!("not a plain insert: {statement:.60}").into(),
        ));
    };
    let mut buf: Vec<u8> = Vec::with_capacity(64 + rows.len() * cols * 16);
    buf.extend_from_slice(b"PGCOPY\n\xff\r\n\0");
    buf.extend_from_slice(&0i32.to_be_bytes()); // flags
    buf.extend_from_slice(&0i32.to_be_bytes()); // header extension
    for (n, row) in rows.iter().enumerate() {
        if row.len() != cols {
            return Err(sqlx::Error::Encode(
                format!("row {n} has {} values, the first {cols}", row.len()).into(),
            ));
        }
        buf.extend_from_slice(&(cols as i16).to_be_bytes());
        for v in row {
            copy_field(&mut buf, v)?;
        }
    }
    buf.extend_from_slice(&(-1i16).to_be_bytes());
    Ok((format!("copy {target} from stdin (format binary)"), buf))
}

/// Sends `buf` by the `COPY` `statement`.
async fn send_copy(
    pg: &mut sqlx::PgConnection,
    statement: &str,
    buf: Vec<u8>,
) -> Result<u64, sqlx::Error> {
    let mut copy = pg.copy_in_raw(statement).await?;
    if let Err(e) = copy.send(buf).await {
        copy.abort(e.to_string()).await?;
        return Err(e);
    }
    copy.finish().await
}

/// PostgreSQL's unique violation.
const UNIQUE_VIOLATION: &str = "23505";

/// Sends `buf` by the `COPY` `statement` under the savepoint `name`. True when every row went
/// in; false when one met a row a unique index already held, with the transaction rolled
/// back to the savepoint (nothing of the `COPY` stays). Other errors are returned.
pub(crate) async fn copy_raw_under_savepoint(
    pg: &mut sqlx::PgConnection,
    name: &str,
    statement: &str,
    buf: Vec<u8>,
) -> Result<bool, sqlx::Error> {
    sqlx::query(&format!("savepoint {name}"))
        .execute(&mut *pg)
        .await?;
    match send_copy(pg, statement, buf).await {
        Ok(_) => {
            sqlx::query(&format!("release savepoint {name}"))
                .execute(&mut *pg)
                .await?;
            Ok(true)
        }
        Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some(UNIQUE_VIOLATION) => {
            sqlx::query(&format!("rollback to savepoint {name}"))
                .execute(&mut *pg)
                .await?;
            sqlx::query(&format!("release savepoint {name}"))
                .execute(&mut *pg)
                .await?;
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// The plain insert `head` of `rows` by a binary `COPY` under the savepoint `name` (PostgreSQL
/// only): see [`copy_raw_under_savepoint`].
pub(crate) async fn copy_under_savepoint(
    conn: &mut dyn Conn,
    name: &str,
    head: &str,
    rows: &[Vec<Val>],
) -> Result<bool, sqlx::Error> {
    let Some(cols) = rows.first().map(Vec::len) else {
        return Ok(true);
    };
    let (statement, buf) = copy_statement(head, rows, cols)?;
    let pg = crate::conn::dialect::postgres(conn)?;
    copy_raw_under_savepoint(pg, name, &statement, buf).await
}

/// One field of a binary `COPY` row: its length (-1: NULL) and its bytes.
fn copy_field(buf: &mut Vec<u8>, v: &Val) -> Result<(), sqlx::Error> {
    fn bytes(buf: &mut Vec<u8>, b: &[u8]) {
        buf.extend_from_slice(&(b.len() as i32).to_be_bytes());
        buf.extend_from_slice(b);
    }
    match v {
        Val::I64(x) | Val::OptI64(Some(x)) => bytes(buf, &x.to_be_bytes()),
        Val::Text(x) | Val::OptText(Some(x)) => bytes(buf, x.as_bytes()),
        Val::Bytes(x) | Val::OptBytes(Some(x)) => bytes(buf, x),
        Val::Bool(x) => bytes(buf, &[u8::from(*x)]),
        Val::F64(x) => bytes(buf, &x.to_bits().to_be_bytes()),
        Val::OptI64(None) | Val::OptText(None) | Val::OptBytes(None) => {
            buf.extend_from_slice(&(-1i32).to_be_bytes())
        }
        Val::Strings(_) => {
            return Err(sqlx::Error::Encode("a list is not a column value".into()));
        }
    }
    Ok(())
}

/// `head select * from unnest(cast($1 as bigint[]), ...) tail`, one array per column.
async fn insert_rows_postgres(
    pg: &mut sqlx::PgConnection,
    head: &str,
    tail: &str,
    rows: Vec<Vec<Val>>,
    cols: usize,
) -> Result<u64, sqlx::Error> {
    let mut columns: Vec<Column> = rows[0].iter().map(|v| Column::of(v, rows.len())).collect();
    for (n, row) in rows.into_iter().enumerate() {
        if row.len() != cols {
            return Err(sqlx::Error::Encode(
                format!("row {n} has {} values, the first {cols}", row.len()).into(),
            ));
        }
        for (c, (column, v)) in columns.iter_mut().zip(row).enumerate() {
            if let Err(v) = column.push(v) {
                let shown = format!("{v:?}");
                let want = column.sql_type();
                return Err(sqlx::Error::Encode(
                    format!("row {n}, column {c}: {shown:.60} is not a {want} element").into(),
                ));
            }
        }
    }
    let arrays: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| format!("cast(${} as {})", i + 1, c.sql_type()))
        .collect();
    let sql = format!(
        "{} select * from unnest({}) {}",
        head.trim(),
        arrays.join(", "),
        tail.trim()
    );
    let mut q = sqlx::query::<sqlx::Postgres>(&sql);
    for c in columns {
        q = match c {
            Column::I64(v) => q.bind(v),
            Column::Text(v) => q.bind(v),
            Column::Bytes(v) => q.bind(v),
            Column::Bool(v) => q.bind(v),
            Column::F64(v) => q.bind(v),
        };
    }
    Ok(q.execute(pg).await?.rows_affected())
}

/// The filter of the one account bound as `$1`, for statements that take a `{filter}` (the
/// filter of many is [`in_list`]'s).
pub(crate) const ONE_ACCOUNT: &str = "account = $1";

/// Most values looked up with one query.
pub const MAX_IN_LIST: usize = 1_000;

/// `column` is one of the strings of the list bound as `$1` ([`Val::Strings`]), in
/// `backend`'s form (`Backend::in_list` in `dialect.rs`): one parameter for up to
/// [`MAX_IN_LIST`] values, looked up through the column's index.
pub(crate) fn in_list(column: &str, backend: crate::conn::backend::Backend) -> String {
    backend.in_list(column)
}

#[cfg(test)]
mod tests {
    use super::{Column, Val, values};

    #[test]
    fn a_postgres_column_takes_only_its_first_rows_type() {
        let mut c = Column::of(&Val::OptI64(None), 3);
        assert_eq!(c.sql_type(), "bigint[]");
        assert!(c.push(Val::OptI64(None)).is_ok());
        assert!(c.push(Val::I64(7)).is_ok());
        assert_eq!(c.push(Val::Text("7".into())), Err(Val::Text("7".into())));
        let Column::I64(v) = c else { panic!() };
        assert_eq!(v, [None, Some(7)]);
        assert_eq!(Column::of(&Val::Bytes(vec![]), 1).sql_type(), "bytea[]");
        assert_eq!(Column::of(&Val::OptText(None), 1).sql_type(), "text[]");
    }

    #[test]
    fn rows_of_numbered_or_anonymous_parameters() {
        assert_eq!(values(2, 2, false), "($1,$2),($3,$4)");
        assert_eq!(values(2, 2, true), "(?,?),(?,?)");
    }
}
