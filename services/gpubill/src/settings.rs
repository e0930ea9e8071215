//! `gpubill serve`'s settings: flags, an optional TOML file and the environment, merged in
//! that order of precedence (see `serve.rs`), and the secrets that must never print.

use anyhow::Context;
use billing_api::generate_secret;
use clap::Args;
use serde::Deserialize;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// A value that must never appear in logs or debug output.
#[derive(Clone, Deserialize, Default)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// `gpubill serve`'s flags (also `migrate`'s and `compact`'s). The groups are flattened in
/// this order, so `--help` lists every flag where it always stood.
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Settings file (TOML): data_dir, listen, prices, topup_settlement, [database] url.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Where the embedded database and the admin token live (default ./data).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// sqlite://PATH or postgres://... (default: SQLite in the data dir).
    #[arg(long)]
    pub database: Option<String>,
    /// Address to listen on (default 127.0.0.1:8080).
    #[arg(long)]
    pub listen: Option<SocketAddr>,
    /// A price book to upload at start when it differs from the latest version.
    #[arg(long)]
    pub prices: Option<PathBuf>,
    #[command(flatten)]
    pub kafka: KafkaFlags,
    #[command(flatten)]
    pub intake: IntakeFlags,
    #[command(flatten)]
    pub closing: CloseFlags,
    #[command(flatten)]
    pub notify: NotifyFlags,
    #[command(flatten)]
    pub store: StoreFlags,
    #[command(flatten)]
    pub numbering: NumberingFlags,
    #[command(flatten)]
    pub payment: PaymentFlags,
    #[command(flatten)]
    pub limits: LimitsFlags,
}

/// Kafka mode: the brokers, the topics and how the usage topic is consumed.
#[derive(Args, Debug, Clone)]
pub struct KafkaFlags {
    /// Consume usage events from Kafka at HOST:PORT (offsets kept in the database).
    #[arg(long, env = "GPUBILL__KAFKA__BROKERS")]
    pub kafka_brokers: Option<String>,
    /// The usage topic.
    #[arg(long, default_value = "gpu.usage.v1")]
    pub usage_topic: String,
    /// Partitions of the usage topic when serve creates it (an existing one is kept as it
    /// is): the most engines of one group that can share the work.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(i32).range(1..=10_000))]
    pub usage_partitions: i32,
    /// Where admin commands (price books, accounts, period closes) are relayed, for replay.
    #[arg(long, default_value = "billing.commands.v1")]
    pub commands_topic: String,
    /// Where issued invoices are relayed.
    #[arg(long, default_value = "billing.invoices.v1")]
    pub invoices_topic: String,
    /// Where quota decisions are relayed.
    #[arg(long, default_value = "billing.quota.v1")]
    pub quota_topic: String,
    /// Where notifications (budgets, balance, reminders, arrears) are relayed (issue 28).
    #[arg(long, default_value = "billing.notifications.v1")]
    pub notifications_topic: String,
    /// Where rejected usage records are relayed, with their reason in headers.
    #[arg(long, default_value = "gpu.usage.dlq.v1")]
    pub dead_letter_topic: String,
    /// Most usage records folded in one database transaction.
    #[arg(long, default_value_t = 1000)]
    pub kafka_batch_max: usize,
    /// Transactions a consumed batch is folded in at once, each over its own partitions.
    #[arg(long, default_value_t = 2)]
    pub kafka_fold_lanes: usize,
    /// Longest a consumed record waits for its batch to fill, in milliseconds.
    #[arg(long, default_value_t = 50)]
    pub kafka_linger_ms: u64,
    /// The consumer's session timeout, in milliseconds: how long the broker waits for a
    /// silent engine before giving its partitions to the others (and, with tansu, about twice
    /// how long a group join waits for members).
    #[arg(long, default_value_t = 6000)]
    pub kafka_session_timeout_ms: u32,
    /// Kafka consumer group: engines of one deployment share it (they split the partitions).
    /// A shard's engines use `{group}.shard-I-of-N`.
    #[arg(long, default_value = "gpubill")]
    pub kafka_group: String,
    /// Run as shard INDEX of COUNT (issue 29, e.g. `0/2`): fold only the records of the
    /// organization trees whose root hashes here, from every partition of the usage topic, in
    /// the consumer group `{group}.shard-I-of-N`, with the commands topic
    /// `{commands-topic}.shard-I-of-N`. Needs `--kafka-brokers` and a database of its own.
    #[arg(long, env = "GPUBILL_SHARD")]
    pub shard: Option<billing_store::shard::Shard>,
    /// With `--shard`: the shard directory (PostgreSQL, see `gpubill shards`). The API then
    /// forwards each request for a tree another shard holds to that shard's API.
    #[arg(long, env = "GPUBILL_SHARD_DIRECTORY", requires = "shard")]
    pub shard_directory: Option<String>,
}

/// Which events the engine accepts by their time.
#[derive(Args, Debug, Clone)]
pub struct IntakeFlags {
    /// How far past the engine's clock an event may end, in seconds; later ones are
    /// dead-lettered as `too_early` (a node agent with a wrong clock).
    #[arg(long, default_value_t = billing_store::DEFAULT_MAX_FUTURE_S)]
    pub max_future_seconds: i64,
    /// How long event identities are kept, in days before the engine's clock: an event
    /// ending earlier is dead-lettered as `too_late` (it could otherwise count twice once its
    /// identity is compacted away by `gpubill compact`).
    #[arg(long, default_value_t = billing_store::DEFAULT_DEDUPE_HORIZON_S / 86_400)]
    pub dedupe_horizon_days: i64,
}

/// Closing periods automatically.
#[derive(Args, Debug, Clone)]
pub struct CloseFlags {
    /// Close each period automatically once its end plus this grace has passed on the clock
    /// (e.g. `72h`, `3d`, `90m`, `0s`), checked every `--close-check-seconds`; still refused while usage is
    /// unpriced (logged, and `gpubill_close_blocked` is 1 on `/metrics`). Off when not given:
    /// periods are closed by hand (`POST /v1/admin/invoices/close`), which always works.
    #[arg(long, value_parser = crate::autoclose::parse_grace)]
    pub close_grace: Option<i64>,
    /// How often `--close-grace` looks for periods due, in seconds.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub close_check_seconds: u64,
}

/// Notifications and their webhooks (issue 28).
#[derive(Args, Debug, Clone)]
pub struct NotifyFlags {
    /// A range of addresses webhook endpoints may have besides public ones (e.g.
    /// `10.1.0.0/16` where the rental backends listen, `127.0.0.1/32` for tests); repeatable.
    /// By default only public addresses are reached (private, loopback, link-local, metadata
    /// addresses are refused when the endpoint is registered and at every attempt).
    #[arg(
        long = "webhook-allow-cidr",
        env = "GPUBILL_WEBHOOK_ALLOW_CIDRS",
        value_delimiter = ','
    )]
    pub webhook_allow_cidrs: Vec<String>,
    /// How often every account's arrears steps, balance alerts and reminders are evaluated
    /// (`POST /v1/admin/notify/tick` does it by hand), in seconds; 0: never.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub notify_tick_seconds: u64,
    /// Do not run the webhook delivery worker in this process (another engine runs it).
    #[arg(long)]
    pub no_webhook_worker: bool,
}

impl NotifyFlags {
    /// The addresses webhook endpoints may have: public ones and `--webhook-allow-cidr`.
    pub fn webhook_policy(&self) -> anyhow::Result<billing_webhooks::target::AddressPolicy> {
        let mut allowed = Vec::with_capacity(self.webhook_allow_cidrs.len());
        for text in &self.webhook_allow_cidrs {
            let net: ipnet::IpNet = text.trim().parse().with_context(|| {
                format!("--webhook-allow-cidr {text:?}: not a CIDR range such as 10.0.0.0/8")
            })?;
            allowed.push(net);
        }
        Ok(billing_webhooks::target::AddressPolicy::allowing(allowed))
    }
}

/// How the store keeps holds and ledgers.
#[derive(Args, Debug, Clone)]
pub struct StoreFlags {
    /// PostgreSQL: authorizations answer without waiting for their hold's WAL flush (lower
    /// p99 on slow disks); a crash of PostgreSQL may then forget the holds of its last
    /// ~0.6 s (see `Store::with_durable_holds`). Off by default: every granted hold survives
    /// a crash. Usage is always committed durably.
    #[arg(long)]
    pub async_holds: bool,
    /// Usage keys of accounts' ledgers kept in memory between batches, so a batch re-rates
    /// the accounts it touched without reading their ledgers again (checked against the
    /// database on every use; see `billing_store::Store::with_ledger_cache_keys`); 0: off.
    #[arg(long, default_value_t = billing_store::DEFAULT_LEDGER_CACHE_KEYS)]
    pub ledger_cache_keys: usize,
}

/// Document numbers: the invoice and credit note series.
#[derive(Args, Debug, Clone)]
pub struct NumberingFlags {
    /// Invoice numbers are `{prefix}-{year}-{nnnnnn}`, gapless per year (1 to 16 of A-Z 0-9).
    /// Every engine on one database, and `gpubill replay`, must use the same.
    #[arg(long, env = "GPUBILL_INVOICE_PREFIX", default_value = billing_core::numbering::INVOICE_PREFIX)]
    pub invoice_prefix: String,
    /// Credit note numbers are `{prefix}-{year}-{nnnnnn}` (issue 12), like invoice numbers
    /// and different from their prefix. Every engine and `gpubill replay` must use the same.
    #[arg(long, env = "GPUBILL_CREDIT_NOTE_PREFIX", default_value = billing_core::numbering::CREDIT_NOTE_PREFIX)]
    pub credit_note_prefix: String,
    /// A region's own invoice and credit note series (section 19), `REGION=INVOICE:NOTE`
    /// (e.g. `us-west=USW:USWCN`), repeated or comma-separated; regions without one use the
    /// prefixes above. Every engine and `gpubill replay` must use the same.
    #[arg(
        long = "region-prefix",
        env = "GPUBILL_REGION_PREFIXES",
        value_delimiter = ','
    )]
    pub region_prefixes: Vec<String>,
}

/// Paying invoices: when they are overdue, whether a top-up settles them.
#[derive(Args, Debug, Clone)]
pub struct PaymentFlags {
    /// Days after issue an unpaid invoice is `overdue` (0 to 3650).
    #[arg(long, default_value_t = billing_core::adjustment::DEFAULT_PAYMENT_DAYS)]
    pub payment_days: i64,
    /// A top-up does not settle the account's unpaid invoices (by default it pays them from
    /// the wallet, oldest first; issue 24.2). Settings file: `topup_settlement = false`.
    #[arg(long)]
    pub no_topup_settlement: bool,
}

/// The HTTP server's limits: rates per token, timeouts, connections.
#[derive(Args, Debug, Clone)]
pub struct LimitsFlags {
    /// Requests per second per customer API key (burst twice as many); 0: unlimited.
    #[arg(long, default_value_t = 100)]
    pub rate_limit_customer: u32,
    /// Requests per second of the ingest token, and of the admin token (burst twice as many);
    /// 0: unlimited.
    #[arg(long, default_value_t = 5000)]
    pub rate_limit_ingest: u32,
    /// A connection that has not sent its request headers within this many ms is closed.
    #[arg(long, default_value_t = 10_000)]
    pub header_timeout_ms: u64,
    /// A request body not received within this many ms is answered 408.
    #[arg(long, default_value_t = 30_000)]
    pub body_timeout_ms: u64,
    /// Most HTTP connections served at once (more wait in the accept queue).
    #[arg(long, default_value_t = 1024)]
    pub max_connections: usize,
}

/// Shortest admin or ingest token taken from the environment: a secret guessable by brute
/// force is no secret (generated tokens have 64 hex digits).
pub const MIN_TOKEN_CHARS: usize = 24;

/// A token from the environment variable `name`: refused when shorter than
/// [`MIN_TOKEN_CHARS`].
pub(crate) fn token_from(name: &str, value: Option<String>) -> anyhow::Result<Option<Secret>> {
    match value {
        Some(t) if t.chars().count() < MIN_TOKEN_CHARS => anyhow::bail!(
            "{name} is {} characters: a token must have at least {MIN_TOKEN_CHARS} (unset it to have one generated)",
            t.chars().count()
        ),
        other => Ok(other.map(Secret)),
    }
}

impl LimitsFlags {
    fn rate_limits(&self) -> billing_api::limits::RateLimits {
        let rate = |n: u32| {
            (n > 0).then_some(billing_api::limits::Rate {
                per_second: n,
                burst: n.saturating_mul(2),
            })
        };
        billing_api::limits::RateLimits {
            customer: rate(self.rate_limit_customer),
            ingest: rate(self.rate_limit_ingest),
            admin: rate(self.rate_limit_ingest),
        }
    }

    pub(crate) fn server_limits(&self) -> billing_api::limits::ServerLimits {
        billing_api::limits::ServerLimits {
            header_read_timeout: std::time::Duration::from_millis(self.header_timeout_ms.max(1)),
            body_read_timeout: std::time::Duration::from_millis(self.body_timeout_ms.max(1)),
            max_connections: self.max_connections.max(1),
        }
    }
}

impl Default for ServeArgs {
    /// The flags' own defaults (as if none were given).
    fn default() -> Self {
        #[derive(clap::Parser)]
        struct Defaults {
            #[command(flatten)]
            serve: ServeArgs,
        }
        <Defaults as clap::Parser>::parse_from(["serve"]).serve
    }
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileSettings {
    data_dir: Option<PathBuf>,
    listen: Option<SocketAddr>,
    prices: Option<PathBuf>,
    database: Option<DatabaseSettings>,
    /// Whether a top-up settles the account's unpaid invoices (default true).
    topup_settlement: Option<bool>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct DatabaseSettings {
    url: Option<Secret>,
}

/// Resolved settings.
#[derive(Debug, Clone)]
pub struct Settings {
    pub data_dir: PathBuf,
    pub database_url: Secret,
    pub listen: SocketAddr,
    pub prices: Option<PathBuf>,
    pub admin_token: Option<Secret>,
    pub ingest_token: Option<Secret>,
    pub kafka_brokers: Option<String>,
    pub usage_topic: String,
    pub topics: billing_store::Topics,
    pub max_future_s: i64,
    pub dedupe_horizon_s: i64,
    pub durable_holds: bool,
    pub ledger_cache_keys: usize,
    pub rate_limits: billing_api::limits::RateLimits,
    pub invoice_prefix: String,
    pub credit_note_prefix: String,
    /// `REGION=INVOICE:NOTE` series of `--region-prefix`.
    pub region_prefixes: Vec<String>,
    pub payment_days: i64,
    /// Whether a top-up settles the account's unpaid invoices (issue 24.2).
    pub topup_settlement: bool,
    /// The addresses webhook endpoints may have (`--webhook-allow-cidr`).
    pub webhook_policy: billing_webhooks::target::AddressPolicy,
    /// The shard this engine is (`--shard`), if any.
    pub shard: Option<billing_store::shard::Shard>,
    /// The shard directory the API forwards by (`--shard-directory`).
    pub shard_directory: Option<Secret>,
}

impl Settings {
    pub fn resolve(args: &ServeArgs) -> anyhow::Result<Settings> {
        let file: FileSettings = match &args.config {
            Some(p) => toml::from_str(
                &std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read settings {}", p.display()))?,
            )
            .with_context(|| format!("invalid settings {}", p.display()))?,
            None => FileSettings::default(),
        };
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let data_dir = args
            .data_dir
            .clone()
            .or(env("GPUBILL__DATA_DIR").map(PathBuf::from))
            .or(file.data_dir)
            .unwrap_or_else(|| PathBuf::from("data"));
        let listen = match (args.listen, env("GPUBILL__LISTEN")) {
            (Some(l), _) => l,
            (None, Some(l)) => l
                .parse()
                .with_context(|| format!("GPUBILL__LISTEN {l:?} is not an address"))?,
            (None, None) => file
                .listen
                .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080))),
        };
        let database_url = args
            .database
            .clone()
            .map(Secret)
            .or(env("GPUBILL__DATABASE__URL").map(Secret))
            .or(file.database.and_then(|d| d.url))
            .unwrap_or_else(|| {
                Secret(format!(
                    "sqlite://{}",
                    data_dir.join("gpubill.db").display()
                ))
            });
        if args.kafka.shard.is_some() && args.kafka.kafka_brokers.is_none() {
            anyhow::bail!(
                "--shard needs --kafka-brokers: a shard folds its trees from the shared usage \
                 topic, and ingest over HTTP without Kafka would fold every tree's records here"
            );
        }
        let token = |name: &str| token_from(name, env(name));
        Ok(Settings {
            prices: args
                .prices
                .clone()
                .or(env("GPUBILL__PRICES").map(PathBuf::from))
                .or(file.prices),
            data_dir,
            database_url,
            listen,
            admin_token: token("GPUBILL_ADMIN_TOKEN")?,
            kafka_brokers: args.kafka.kafka_brokers.clone(),
            usage_topic: args.kafka.usage_topic.clone(),
            topics: billing_store::Topics {
                commands: match args.kafka.shard {
                    Some(s) => s.own(&args.kafka.commands_topic),
                    None => args.kafka.commands_topic.clone(),
                },
                invoices: args.kafka.invoices_topic.clone(),
                quota: args.kafka.quota_topic.clone(),
                notifications: args.kafka.notifications_topic.clone(),
            },
            ingest_token: token("GPUBILL_INGEST_TOKEN")?,
            max_future_s: args.intake.max_future_seconds,
            dedupe_horizon_s: args.intake.dedupe_horizon_days.saturating_mul(86_400),
            durable_holds: !args.store.async_holds,
            ledger_cache_keys: args.store.ledger_cache_keys,
            invoice_prefix: args.numbering.invoice_prefix.clone(),
            credit_note_prefix: args.numbering.credit_note_prefix.clone(),
            region_prefixes: args.numbering.region_prefixes.clone(),
            payment_days: args.payment.payment_days,
            topup_settlement: !args.payment.no_topup_settlement
                && file.topup_settlement.unwrap_or(true),
            rate_limits: args.limits.rate_limits(),
            webhook_policy: args.notify.webhook_policy()?,
            shard: args.kafka.shard,
            shard_directory: args.kafka.shard_directory.clone().map(Secret),
        })
    }
}

/// The admin token: from the environment, or generated once and kept in the data dir.
/// Returns the token and whether it was generated now (to print it once).
pub(crate) fn admin_token(settings: &Settings) -> anyhow::Result<(Secret, bool)> {
    if let Some(t) = &settings.admin_token {
        return Ok((t.clone(), false));
    }
    let path = settings.data_dir.join("admin-token");
    if let Ok(t) = std::fs::read_to_string(&path) {
        return Ok((Secret(t.trim().to_string()), false));
    }
    let token = generate_secret("gba_");
    write_private(&path, &token)?;
    Ok((Secret(token), true))
}

pub(crate) fn write_private(path: &Path, contents: &str) -> anyhow::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    opts.mode(0o600);
    let mut f = opts
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    writeln!(f, "{contents}")?;
    Ok(())
}

/// The store as `shard` (`--shard`), if one.
pub fn as_shard(
    store: billing_store::Store,
    shard: Option<billing_store::shard::Shard>,
) -> billing_store::Store {
    match shard {
        Some(s) => store.with_shard(s),
        None => store,
    }
}

/// The store numbering with the store-wide prefixes and each region's own series of
/// `--region-prefix REGION=INVOICE:NOTE` (`serve` and `replay` take the same flags).
pub fn with_numbering(
    store: billing_store::Store,
    invoice_prefix: &str,
    credit_note_prefix: &str,
    region_prefixes: &[String],
) -> anyhow::Result<billing_store::Store> {
    let mut store = store
        .with_invoice_prefix(invoice_prefix)
        .map_err(|e| anyhow::anyhow!("--invoice-prefix: {e}"))?
        .with_credit_note_prefix(credit_note_prefix)
        .map_err(|e| anyhow::anyhow!("--credit-note-prefix: {e}"))?;
    for spec in region_prefixes.iter().filter(|s| !s.trim().is_empty()) {
        let parsed = spec
            .trim()
            .split_once('=')
            .and_then(|(region, series)| Some((region, series.split_once(':')?)));
        let Some((region, (invoice, note))) = parsed else {
            anyhow::bail!(
                "--region-prefix {spec:?}: write REGION=INVOICE:NOTE, e.g. us-west=USW:USWCN"
            );
        };
        store = store
            .with_region_prefixes(region, invoice, note)
            .map_err(|e| anyhow::anyhow!("--region-prefix {spec:?}: {e}"))?;
    }
    Ok(store)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_file_and_secrets_never_print() {
        let dir = std::env::temp_dir().join(format!("gpubill-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("gpubill.toml");
        std::fs::write(&file, "data_dir = \"/srv/gpubill\"\nlisten = \"0.0.0.0:9000\"\n[database]\nurl = \"postgres://u:hunter2@db/gpubill\"\n").unwrap();
        let args = ServeArgs {
            config: Some(file.clone()),
            listen: Some("127.0.0.1:7000".parse().unwrap()),
            ..ServeArgs::default()
        };
        let s = Settings::resolve(&args).unwrap();
        assert_eq!(
            s.listen.to_string(),
            "127.0.0.1:7000",
            "the flag wins over the file"
        );
        assert_eq!(s.data_dir, PathBuf::from("/srv/gpubill"));
        assert_eq!(s.database_url.expose(), "postgres://u:hunter2@db/gpubill");
        let shown = format!("{s:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        // Unknown keys in the file are errors, not silently ignored.
        std::fs::write(&file, "listn = \"0.0.0.0:9000\"\n").unwrap();
        let err = Settings::resolve(&ServeArgs {
            config: Some(file),
            ..ServeArgs::default()
        })
        .unwrap_err();
        assert!(format!("{err:#}").contains("listn"), "{err:#}");
    }

    #[test]
    fn short_tokens_from_the_environment_are_refused() {
        // Issue 14, finding 17: any admin token value was accepted.
        let check = |v: &str| token_from("GPUBILL_ADMIN_TOKEN", Some(v.to_string()));
        let err = check("admin").unwrap_err().to_string();
        assert!(err.contains("at least 24"), "{err}");
        assert!(check(&"x".repeat(24)).unwrap().is_some());
        assert!(token_from("GPUBILL_ADMIN_TOKEN", None).unwrap().is_none());
    }

    #[test]
    fn topup_settlement_is_on_unless_the_flag_or_the_file_turns_it_off() {
        // Issue 24.2.
        let dir = std::env::temp_dir().join(format!("gpubill-topup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("gpubill.toml");
        let with = |text: &str, flag: bool| {
            std::fs::write(&file, text).unwrap();
            let mut args = ServeArgs {
                config: Some(file.clone()),
                ..ServeArgs::default()
            };
            args.payment.no_topup_settlement = flag;
            Settings::resolve(&args).unwrap().topup_settlement
        };
        assert!(with("", false));
        assert!(!with("", true));
        assert!(!with("topup_settlement = false\n", false));
        assert!(with("topup_settlement = true\n", false));
        assert!(!with("topup_settlement = true\n", true), "the flag wins");
    }

    #[test]
    fn the_default_database_is_sqlite_in_the_data_dir() {
        let s = Settings::resolve(&ServeArgs {
            data_dir: Some(PathBuf::from("/tmp/x")),
            ..ServeArgs::default()
        })
        .unwrap();
        if std::env::var("GPUBILL__DATABASE__URL").is_err() {
            assert_eq!(s.database_url.expose(), "sqlite:///tmp/x/gpubill.db");
        }
    }
}
