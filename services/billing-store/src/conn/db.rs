//! The store's one door to its database: sqlx's **native** drivers, PostgreSQL and SQLite,
//! behind the little the store needs (a statement, its bound values, rows back).
//!
//! Every statement of the store goes through [`query`]: the text, then `.bind(..)` values,
//! then `.execute`, `.fetch_all`, `.fetch_one` or `.fetch_optional` on a [`Pool`] or on a
//! connection ([`Conn`], what a [`Tx`] dereferences to). Statements are prepared once per
//! connection and cached (sqlx's persistent statements), on both databases.
//!
//! Where a database's own driver does better than the shared path, the code asks for it:
//! [`Conn::as_pg`] gives the PostgreSQL connection of a transaction, so batches of rows go
//! in by binary `COPY` or as native arrays (`sql.rs`), the identity statement binds
//! `bytea[]`, `text[]` and `int8[]` arrays (`identities.rs`), and nothing goes through a
//! type-erased layer. (Until issue 11 the store ran on sqlx's `Any`
//! driver, which converts every value and row and exposes no native connection.)

use crate::conn::backend::Backend;
use sqlx::postgres::{PgArguments, PgConnection, PgPool, PgRow};
use sqlx::sqlite::{SqliteArguments, SqliteConnection, SqlitePool, SqliteRow};
use sqlx::{ColumnIndex, Postgres, Row, Sqlite};
use std::future::Future;
use std::pin::Pin;

type Fut<'c, T> = Pin<Box<dyn Future<Output = Result<T, sqlx::Error>> + Send + 'c>>;

/// A value bound to a statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    I64(i64),
    OptI64(Option<i64>),
    Text(String),
    OptText(Option<String>),
    Bytes(Vec<u8>),
    OptBytes(Option<Vec<u8>>),
    Bool(bool),
    F64(f64),
    /// A list looked up with [`crate::conn::sql::in_list`]: a native `text[]` on PostgreSQL, a
    /// JSON array on SQLite (read with `json_each`).
    Strings(Vec<String>),
}

macro_rules! val_from {
    ($t:ty, $some:ident, $opt:ident, $conv:expr) => {
        impl From<$t> for Val {
            fn from(v: $t) -> Val {
                #[allow(clippy::redundant_closure_call)]
                Val::$some(($conv)(v))
            }
        }
        impl From<Option<$t>> for Val {
            fn from(v: Option<$t>) -> Val {
                Val::$opt(v.map($conv))
            }
        }
    };
}
val_from!(i64, I64, OptI64, |v| v);
val_from!(i32, I64, OptI64, i64::from);
val_from!(u32, I64, OptI64, i64::from);
val_from!(String, Text, OptText, |v| v);
val_from!(&String, Text, OptText, |v: &String| v.clone());
val_from!(&str, Text, OptText, |v: &str| v.to_string());
val_from!(Vec<u8>, Bytes, OptBytes, |v| v);

impl From<bool> for Val {
    fn from(v: bool) -> Val {
        Val::Bool(v)
    }
}

impl From<f64> for Val {
    fn from(v: f64) -> Val {
        Val::F64(v)
    }
}

impl From<&Option<String>> for Val {
    fn from(v: &Option<String>) -> Val {
        Val::OptText(v.clone())
    }
}

/// Binds `args` to the query `$q` of one driver; a list of strings goes through `$strings`.
macro_rules! bind_all {
    ($q:expr, $args:expr, $strings:expr) => {{
        let mut q = $q;
        for v in $args {
            q = match v {
                Val::Strings(x) => q.bind(($strings)(x)),
                Val::I64(x) => q.bind(x),
                Val::OptI64(x) => q.bind(x),
                Val::Text(x) => q.bind(x),
                Val::OptText(x) => q.bind(x),
                Val::Bytes(x) => q.bind(x),
                Val::OptBytes(x) => q.bind(x),
                Val::Bool(x) => q.bind(x),
                Val::F64(x) => q.bind(x),
            };
        }
        q
    }};
}

fn pg_query(sql: &str, args: Vec<Val>) -> sqlx::query::Query<'_, Postgres, PgArguments> {
    // A native `text[]`.
    bind_all!(sqlx::query::<Postgres>(sql), args, |x: Vec<String>| x)
}

fn sqlite_query(sql: &str, args: Vec<Val>) -> sqlx::query::Query<'_, Sqlite, SqliteArguments<'_>> {
    // SQLite has no arrays: the statements read a JSON array with `json_each`.
    bind_all!(sqlx::query::<Sqlite>(sql), args, |x: Vec<String>| {
        json_array(&x)
    })
}

/// `["a","b"]`: strings as a JSON array (escaped by serde_json).
fn json_array(xs: &[String]) -> String {
    serde_json::to_string(xs).unwrap_or_else(|_| "[]".into())
}

impl<S: AsRef<str>> From<&[S]> for Val {
    fn from(xs: &[S]) -> Val {
        Val::Strings(xs.iter().map(|s| s.as_ref().to_string()).collect())
    }
}

/// A connection of either database, in or out of a transaction. The store's functions take
/// `&mut dyn Conn`; statements run on it through [`Query`].
pub trait Conn: Send {
    fn backend(&self) -> Backend;
    /// The native PostgreSQL connection (None on SQLite), for statements written for it.
    fn as_pg(&mut self) -> Option<&mut PgConnection>;
    #[doc(hidden)]
    fn run_execute<'c>(&'c mut self, sql: &'c str, args: Vec<Val>) -> Fut<'c, u64>;
    #[doc(hidden)]
    fn run_fetch_all<'c>(&'c mut self, sql: &'c str, args: Vec<Val>) -> Fut<'c, Vec<DbRow>>;
    #[doc(hidden)]
    fn run_fetch_optional<'c>(&'c mut self, sql: &'c str, args: Vec<Val>)
    -> Fut<'c, Option<DbRow>>;
}

/// `Conn` for a driver's own connection: its statements built by `$query`, its rows wrapped
/// as `$row`, its PostgreSQL connection (if it is one) given by `$as_pg`.
macro_rules! native_conn {
    ($conn:ty, $backend:expr, $query:ident, $row:path, $as_pg:expr) => {
        impl Conn for $conn {
            fn backend(&self) -> Backend {
                $backend
            }
            fn as_pg(&mut self) -> Option<&mut PgConnection> {
                ($as_pg)(self)
            }
            fn run_execute<'c>(&'c mut self, sql: &'c str, args: Vec<Val>) -> Fut<'c, u64> {
                Box::pin(async move { Ok($query(sql, args).execute(self).await?.rows_affected()) })
            }
            fn run_fetch_all<'c>(
                &'c mut self,
                sql: &'c str,
                args: Vec<Val>,
            ) -> Fut<'c, Vec<DbRow>> {
                Box::pin(async move {
                    let rows = $query(sql, args).fetch_all(self).await?;
                    Ok(rows.into_iter().map($row).collect())
                })
            }
            fn run_fetch_optional<'c>(
                &'c mut self,
                sql: &'c str,
                args: Vec<Val>,
            ) -> Fut<'c, Option<DbRow>> {
                Box::pin(async move { Ok($query(sql, args).fetch_optional(self).await?.map($row)) })
            }
        }
    };
}
fn pg_itself(c: &mut PgConnection) -> Option<&mut PgConnection> {
    Some(c)
}
fn not_pg(_: &mut SqliteConnection) -> Option<&mut PgConnection> {
    None
}
native_conn!(
    PgConnection,
    Backend::Postgres,
    pg_query,
    DbRow::Pg,
    pg_itself
);
native_conn!(
    SqliteConnection,
    Backend::Sqlite,
    sqlite_query,
    DbRow::Lite,
    not_pg
);

/// The store's connection pool.
#[derive(Debug, Clone)]
pub enum Pool {
    Pg(PgPool),
    Lite(SqlitePool),
}

impl Pool {
    pub fn backend(&self) -> Backend {
        match self {
            Pool::Pg(_) => Backend::Postgres,
            Pool::Lite(_) => Backend::Sqlite,
        }
    }

    pub async fn begin(&self) -> Result<Tx, sqlx::Error> {
        Ok(match self {
            Pool::Pg(p) => Tx::Pg(p.begin().await?),
            Pool::Lite(p) => Tx::Lite(p.begin().await?),
        })
    }

    pub async fn close(&self) {
        match self {
            Pool::Pg(p) => p.close().await,
            Pool::Lite(p) => p.close().await,
        }
    }
}

/// A transaction; `&mut *tx` is its connection. Dropped without [`Tx::commit`], it rolls
/// back.
#[derive(Debug)]
pub enum Tx {
    Pg(sqlx::Transaction<'static, Postgres>),
    Lite(sqlx::Transaction<'static, Sqlite>),
}

impl Tx {
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            Tx::Pg(t) => t.commit().await,
            Tx::Lite(t) => t.commit().await,
        }
    }

    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        match self {
            Tx::Pg(t) => t.rollback().await,
            Tx::Lite(t) => t.rollback().await,
        }
    }
}

/// A connection taken from the pool for a few statements outside a transaction.
#[derive(Debug)]
pub enum PoolConn {
    Pg(sqlx::pool::PoolConnection<Postgres>),
    Lite(sqlx::pool::PoolConnection<Sqlite>),
}

impl Pool {
    pub async fn acquire(&self) -> Result<PoolConn, sqlx::Error> {
        Ok(match self {
            Pool::Pg(p) => PoolConn::Pg(p.acquire().await?),
            Pool::Lite(p) => PoolConn::Lite(p.acquire().await?),
        })
    }
}

/// `Deref` to the connection, and `Conn` by delegation (so `&mut tx` and `&mut *tx` both
/// pass where a `&mut dyn Conn` is asked).
macro_rules! delegate_conn {
    ($t:ident) => {
        impl std::ops::Deref for $t {
            type Target = dyn Conn;
            fn deref(&self) -> &(dyn Conn + 'static) {
                match self {
                    $t::Pg(c) => &**c,
                    $t::Lite(c) => &**c,
                }
            }
        }

        impl std::ops::DerefMut for $t {
            fn deref_mut(&mut self) -> &mut (dyn Conn + 'static) {
                match self {
                    $t::Pg(c) => &mut **c,
                    $t::Lite(c) => &mut **c,
                }
            }
        }

        impl Conn for $t {
            fn backend(&self) -> Backend {
                (**self).backend()
            }
            fn as_pg(&mut self) -> Option<&mut PgConnection> {
                (**self).as_pg()
            }
            fn run_execute<'c>(&'c mut self, sql: &'c str, args: Vec<Val>) -> Fut<'c, u64> {
                (**self).run_execute(sql, args)
            }
            fn run_fetch_all<'c>(
                &'c mut self,
                sql: &'c str,
                args: Vec<Val>,
            ) -> Fut<'c, Vec<DbRow>> {
                (**self).run_fetch_all(sql, args)
            }
            fn run_fetch_optional<'c>(
                &'c mut self,
                sql: &'c str,
                args: Vec<Val>,
            ) -> Fut<'c, Option<DbRow>> {
                (**self).run_fetch_optional(sql, args)
            }
        }
    };
}
delegate_conn!(Tx);
delegate_conn!(PoolConn);

/// Where a [`Query`] runs: a connection (`&mut *conn`, `&mut *tx`) or the pool.
pub enum Target<'c> {
    Conn(&'c mut (dyn Conn + 'c)),
    Pool(&'c Pool),
}

impl<'c, 'd: 'c> From<&'c mut (dyn Conn + 'd)> for Target<'c> {
    fn from(c: &'c mut (dyn Conn + 'd)) -> Target<'c> {
        Target::Conn(c)
    }
}

impl<'c> From<&'c Pool> for Target<'c> {
    fn from(p: &'c Pool) -> Target<'c> {
        Target::Pool(p)
    }
}

impl<'c> From<&'c mut Tx> for Target<'c> {
    fn from(t: &'c mut Tx) -> Target<'c> {
        Target::Conn(&mut **t)
    }
}

/// What a statement changed.
#[derive(Debug, Clone, Copy)]
pub struct Done(u64);

impl Done {
    pub fn rows_affected(&self) -> u64 {
        self.0
    }
}

/// A statement with its bound values (see the module's documentation).
#[must_use = "a query does nothing until it is executed or fetched"]
pub struct Query<'q> {
    sql: &'q str,
    args: Vec<Val>,
}

/// A statement of `sql`, to bind values to and run.
pub fn query(sql: &str) -> Query<'_> {
    Query {
        sql,
        args: Vec::new(),
    }
}

impl<'q> Query<'q> {
    pub fn bind(mut self, v: impl Into<Val>) -> Query<'q> {
        self.args.push(v.into());
        self
    }

    pub async fn execute<'c>(self, on: impl Into<Target<'c>>) -> Result<Done, sqlx::Error> {
        let n = match on.into() {
            Target::Conn(c) => c.run_execute(self.sql, self.args).await?,
            Target::Pool(Pool::Pg(p)) => pg_query(self.sql, self.args)
                .execute(p)
                .await?
                .rows_affected(),
            Target::Pool(Pool::Lite(p)) => sqlite_query(self.sql, self.args)
                .execute(p)
                .await?
                .rows_affected(),
        };
        Ok(Done(n))
    }

    pub async fn fetch_all<'c>(self, on: impl Into<Target<'c>>) -> Result<Vec<DbRow>, sqlx::Error> {
        Ok(match on.into() {
            Target::Conn(c) => c.run_fetch_all(self.sql, self.args).await?,
            Target::Pool(Pool::Pg(p)) => pg_query(self.sql, self.args)
                .fetch_all(p)
                .await?
                .into_iter()
                .map(DbRow::Pg)
                .collect(),
            Target::Pool(Pool::Lite(p)) => sqlite_query(self.sql, self.args)
                .fetch_all(p)
                .await?
                .into_iter()
                .map(DbRow::Lite)
                .collect(),
        })
    }

    pub async fn fetch_optional<'c>(
        self,
        on: impl Into<Target<'c>>,
    ) -> Result<Option<DbRow>, sqlx::Error> {
        Ok(match on.into() {
            Target::Conn(c) => c.run_fetch_optional(self.sql, self.args).await?,
            Target::Pool(Pool::Pg(p)) => pg_query(self.sql, self.args)
                .fetch_optional(p)
                .await?
                .map(DbRow::Pg),
            Target::Pool(Pool::Lite(p)) => sqlite_query(self.sql, self.args)
                .fetch_optional(p)
                .await?
                .map(DbRow::Lite),
        })
    }

    pub async fn fetch_one<'c>(self, on: impl Into<Target<'c>>) -> Result<DbRow, sqlx::Error> {
        self.fetch_optional(on)
            .await?
            .ok_or(sqlx::Error::RowNotFound)
    }
}

/// A row of either database.
pub enum DbRow {
    Pg(PgRow),
    Lite(SqliteRow),
}

/// A column's position or name.
pub trait ColIdx: ColumnIndex<PgRow> + ColumnIndex<SqliteRow> + Copy + std::fmt::Debug {}
impl ColIdx for usize {}
impl ColIdx for &str {}

/// A value read from a column: the types the store's tables hold (integers of any width
/// read as `i64`, as PostgreSQL's `integer` columns and functions need).
pub trait FromDb: Sized {
    fn from_pg<I: ColIdx>(row: &PgRow, i: I) -> Result<Self, sqlx::Error>;
    fn from_sqlite<I: ColIdx>(row: &SqliteRow, i: I) -> Result<Self, sqlx::Error>;
}

macro_rules! from_db {
    ($t:ty) => {
        impl FromDb for $t {
            fn from_pg<I: ColIdx>(row: &PgRow, i: I) -> Result<Self, sqlx::Error> {
                row.try_get(i)
            }
            fn from_sqlite<I: ColIdx>(row: &SqliteRow, i: I) -> Result<Self, sqlx::Error> {
                row.try_get(i)
            }
        }
    };
}
from_db!(String);
from_db!(Option<String>);
from_db!(Vec<u8>);
from_db!(Option<Vec<u8>>);
from_db!(bool);
from_db!(Option<bool>);
from_db!(f64);
from_db!(Option<f64>);

fn pg_int<I: ColIdx>(row: &PgRow, i: I) -> Result<Option<i64>, sqlx::Error> {
    use sqlx::{TypeInfo, ValueRef};
    let raw = row.try_get_raw(i)?;
    let ty = raw.type_info();
    match ty.name() {
        "INT4" => Ok(row.try_get::<Option<i32>, _>(i)?.map(i64::from)),
        "INT2" => Ok(row.try_get::<Option<i16>, _>(i)?.map(i64::from)),
        _ => row.try_get::<Option<i64>, _>(i),
    }
}

impl FromDb for Option<i64> {
    fn from_pg<I: ColIdx>(row: &PgRow, i: I) -> Result<Self, sqlx::Error> {
        pg_int(row, i)
    }
    fn from_sqlite<I: ColIdx>(row: &SqliteRow, i: I) -> Result<Self, sqlx::Error> {
        row.try_get(i)
    }
}

impl FromDb for i64 {
    fn from_pg<I: ColIdx>(row: &PgRow, i: I) -> Result<Self, sqlx::Error> {
        pg_int(row, i)?.ok_or_else(|| null_in(i))
    }
    fn from_sqlite<I: ColIdx>(row: &SqliteRow, i: I) -> Result<Self, sqlx::Error> {
        row.try_get(i)
    }
}

fn null_in<I: ColIdx>(i: I) -> sqlx::Error {
    sqlx::Error::ColumnDecode {
        index: format!("{i:?}"),
        source: "unexpected NULL".into(),
    }
}

impl DbRow {
    pub fn try_get<T: FromDb, I: ColIdx>(&self, i: I) -> Result<T, sqlx::Error> {
        match self {
            DbRow::Pg(r) => T::from_pg(r, i),
            DbRow::Lite(r) => T::from_sqlite(r, i),
        }
    }

    /// The column's value; panics when it is missing or of another type (the store's own
    /// statements name their columns and types).
    pub fn get<T: FromDb, I: ColIdx>(&self, i: I) -> T {
        match self.try_get(i) {
            Ok(v) => v,
            Err(e) => panic!("column {i:?}: {e}"),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            DbRow::Pg(r) => r.len(),
            DbRow::Lite(r) => r.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
