//! The tables a move of a tree carries (issue 29, `moves.rs`), and how their rows are read
//! from the source (`COPY ... TO STDOUT`) and written to the target (`COPY ... FROM STDIN`,
//! renumbered where a sequence numbers them).

use crate::conn::error::Result;
use sqlx::Row;

/// How the rows of a table belong to a tree.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Belongs {
    /// A column holding the account (or billing domain) id.
    Column(&'static str),
    /// A payment, by its invoice's account.
    Invoice,
    /// A delivery (or its attempts), by its endpoint's account.
    Endpoint,
    /// A number series, by the tree's own series (`moving_series`).
    Series,
}

/// One table a move carries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Table {
    pub(crate) name: &'static str,
    belongs: Belongs,
    /// A column the target's sequence numbers anew, in the source's order.
    pub(crate) renumbered: Option<&'static str>,
    /// A column holding a notification id, renumbered with the notifications.
    pub(crate) notification: Option<&'static str>,
}

const fn by(name: &'static str, column: &'static str) -> Table {
    Table {
        name,
        belongs: Belongs::Column(column),
        renumbered: None,
        notification: None,
    }
}

/// Every table of a tree's rows, in the order they are written (a table whose column follows
/// another's renumbering comes after it). Not carried: the log, the outbox and dead letters
/// (the source's own relay publishes what it wrote), consumer positions, idempotency keys,
/// and the platform's tables (price books, periods, settings, number series).
pub(crate) const TABLES: &[Table] = &[
    by("accounts", "id"),
    by("account_profiles", "account"),
    by("account_term_revisions", "account"),
    by("account_terms", "account"),
    by("adjustments", "account"),
    by("api_keys", "account"),
    by("credit_notes", "account"),
    by("egress", "account"),
    by("events", "account"),
    by("hold_revs", "account"),
    by("holds", "account"),
    by("invoices", "account"),
    by("late_usage", "account"),
    by("ledger_keys", "account"),
    by("ledger_tokens", "account"),
    Table {
        renumbered: Some("id"),
        ..by("notifications", "account")
    },
    by("notify_settings", "account"),
    by("notify_states", "account"),
    by("provisional_costs", "account"),
    Table {
        renumbered: Some("seq"),
        ..by("quota_decisions", "account")
    },
    by("quota_levels", "account"),
    by("quotas", "account"),
    by("rental_events", "account"),
    by("usage_facts", "account"),
    Table {
        renumbered: Some("seq"),
        ..by("wallet_movements", "account")
    },
    by("wallets", "account"),
    by("webhook_endpoints", "account"),
    Table {
        name: "number_series",
        belongs: Belongs::Series,
        renumbered: None,
        notification: None,
    },
    Table {
        name: "invoice_payments",
        belongs: Belongs::Invoice,
        renumbered: Some("seq"),
        notification: None,
    },
    Table {
        name: "deliveries",
        belongs: Belongs::Endpoint,
        renumbered: None,
        notification: Some("notification"),
    },
    Table {
        name: "delivery_attempts",
        belongs: Belongs::Endpoint,
        renumbered: None,
        notification: Some("notification"),
    },
];

impl Table {
    /// The tree's rows of this table (the accounts are in `moving_accounts`), as a `select`.
    pub(crate) fn select(&self) -> String {
        let order = self
            .renumbered
            .map(|c| format!(" order by t.{c}"))
            .unwrap_or_default();
        match self.belongs {
            Belongs::Column(c) => format!(
                "select t.* from {} t join moving_accounts m on t.{c} = m.account{order}",
                self.name
            ),
            Belongs::Invoice => format!(
                "select t.* from {} t join invoices i on i.id = t.invoice_id \
                 join moving_accounts m on i.account = m.account{order}",
                self.name
            ),
            Belongs::Endpoint => format!(
                "select t.* from {} t join webhook_endpoints e on e.id = t.endpoint \
                 join moving_accounts m on e.account = m.account{order}",
                self.name
            ),
            Belongs::Series => format!(
                "select t.* from {} t join moving_series m on t.series = m.series",
                self.name
            ),
        }
    }

    pub(crate) fn delete(&self) -> String {
        match self.belongs {
            Belongs::Column(c) => format!(
                "delete from {} t using moving_accounts m where t.{c} = m.account",
                self.name
            ),
            Belongs::Invoice => format!(
                "delete from {} t using invoices i, moving_accounts m \
                 where i.id = t.invoice_id and i.account = m.account",
                self.name
            ),
            Belongs::Endpoint => format!(
                "delete from {} t using webhook_endpoints e, moving_accounts m \
                 where e.id = t.endpoint and e.account = m.account",
                self.name
            ),
            Belongs::Series => format!(
                "delete from {} t using moving_series m where t.series = m.series",
                self.name
            ),
        }
    }
}

pub(crate) async fn copy_out(conn: &mut sqlx::PgConnection, select: &str) -> Result<Vec<u8>> {
    use futures_util::TryStreamExt;
    let mut stream = conn
        .copy_out_raw(&format!("copy ({select}) to stdout (format binary)"))
        .await?;
    let mut out = Vec::new();
    while let Some(chunk) = stream.try_next().await? {
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

pub(crate) async fn copy_in(
    conn: &mut sqlx::PgConnection,
    table: &str,
    data: Vec<u8>,
) -> Result<u64> {
    let mut copy = conn
        .copy_in_raw(&format!("copy {table} from stdin (format binary)"))
        .await?;
    if let Err(e) = copy.send(data).await {
        copy.abort(e.to_string()).await?;
        return Err(e.into());
    }
    Ok(copy.finish().await?)
}

/// A table whose rows are renumbered (or refer to renumbered notifications): into a staging
/// table first, numbers mapped there, then in. The mapping of notification ids is kept in
/// `moved_notifications` for the deliveries that follow.
pub(crate) async fn staged(
    conn: &mut sqlx::PgConnection,
    table: &Table,
    data: Vec<u8>,
) -> Result<u64> {
    let stage = format!("moving_{}", table.name);
    sqlx::query(&format!(
        "create temp table {stage} (like {} including defaults) on commit drop",
        table.name
    ))
    .execute(&mut *conn)
    .await?;
    let n = copy_in(conn, &stage, data).await?;
    if let Some(col) = table.notification {
        sqlx::query(&format!(
            "update {stage} s set {col} = m.new from moved_notifications m where s.{col} = m.old"
        ))
        .execute(&mut *conn)
        .await?;
    }
    if let Some(col) = table.renumbered {
        let olds: Vec<i64> =
            sqlx::query(&format!("select {col} as old from {stage} order by {col}"))
                .fetch_all(&mut *conn)
                .await?
                .into_iter()
                .map(|r| r.get::<i64, _>("old"))
                .collect();
        let mut news: Vec<i64> = sqlx::query(&format!(
            "select nextval(pg_get_serial_sequence('{}', '{col}')) as new \
             from generate_series(1, $1)",
            table.name
        ))
        .bind(olds.len() as i64)
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .map(|r| r.get::<i64, _>("new"))
        .collect();
        news.sort_unstable();
        let map = if table.name == "notifications" {
            "moved_notifications".to_string()
        } else {
            format!("moved_{}_map", table.name)
        };
        sqlx::query(&format!(
            "create temp table {map} (old bigint primary key, new bigint not null) on commit drop"
        ))
        .execute(&mut *conn)
        .await?;
        sqlx::query(&format!(
            "insert into {map} select * from unnest($1::bigint[], $2::bigint[])"
        ))
        .bind(&olds)
        .bind(&news)
        .execute(&mut *conn)
        .await?;
        sqlx::query(&format!(
            "update {stage} s set {col} = m.new from {map} m where s.{col} = m.old"
        ))
        .execute(&mut *conn)
        .await?;
    }
    sqlx::query(&format!(
        "insert into {} overriding system value select * from {stage}",
        table.name
    ))
    .execute(&mut *conn)
    .await?;
    Ok(n)
}
