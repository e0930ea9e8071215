//! `gpubill shards`: the directory of a sharded deployment and moves of organization trees
//! between shards (issue 29; `docs/scaling.md`, "Shards").

use anyhow::Context;
use billing_store::Store;
use billing_store::shard::Shard;
use billing_store::shard::directory::Directory;
use clap::{Args, Subcommand};

#[derive(Args, Debug)]
pub struct ShardsArgs {
    /// The directory database (PostgreSQL), made on first use.
    #[arg(long, env = "GPUBILL_SHARD_DIRECTORY")]
    pub directory: String,
    #[command(subcommand)]
    pub command: ShardsCommand,
}

#[derive(Subcommand, Debug)]
pub enum ShardsCommand {
    /// Adds a shard to the directory, or changes its addresses.
    Add {
        /// INDEX/COUNT, as the shard's engines run (`serve --shard`).
        #[arg(long)]
        shard: Shard,
        /// The shard's database.
        #[arg(long)]
        database: String,
        /// The shard's API base URL (requests for its trees are forwarded there).
        #[arg(long)]
        api: String,
    },
    /// Lists the shards (JSON; database passwords masked).
    List,
    /// Moves an organization tree (by its root account) to another shard, online: usage keeps
    /// flowing, the tree's records wait on the target for the seconds of the move.
    Move {
        /// The tree's root account.
        #[arg(long)]
        root: String,
        /// The index of the shard to move it to.
        #[arg(long)]
        to: u32,
        /// The usage topic whose stored positions make the cutover.
        #[arg(long, default_value = "gpu.usage.v1")]
        usage_topic: String,
    },
    /// Undoes a move that failed before the source let go of the tree.
    Abandon {
        #[arg(long)]
        root: String,
        #[arg(long)]
        to: u32,
    },
}

pub async fn run(args: ShardsArgs) -> anyhow::Result<()> {
    let directory = Directory::open(&args.directory)
        .await
        .context("cannot open the shard directory")?;
    let clock = billing_api::system_clock();
    match args.command {
        ShardsCommand::Add {
            shard,
            database,
            api,
        } => {
            directory.put_shard(shard, &database, &api).await?;
            eprintln!("gpubill: shard {shard} is {api}");
        }
        ShardsCommand::List => {
            let shards: Vec<_> = directory
                .shards()
                .await?
                .into_iter()
                .map(|mut s| {
                    s.database_url = masked(&s.database_url);
                    s
                })
                .collect();
            println!("{}", serde_json::to_string_pretty(&shards)?);
        }
        ShardsCommand::Move {
            root,
            to,
            usage_topic,
        } => {
            let (source, target) = stores(&directory, &root, to).await?;
            let started = std::time::Instant::now();
            let report =
                billing_store::shard::move_tree(&source, &target, &root, &usage_topic, clock())
                    .await?;
            directory
                .placed(&root, report.to, report.moves, clock())
                .await?;
            let seconds = started.elapsed().as_secs_f64();
            println!(
                "{}",
                serde_json::json!({
                    "root": report.root, "from": report.from, "to": report.to,
                    "move": report.moves, "accounts": report.accounts, "rows": report.rows,
                    "cutover": report.cutover, "seconds": seconds,
                })
            );
            eprintln!(
                "gpubill: moved {root} from shard {} to shard {} in {seconds:.2} s",
                report.from, report.to
            );
            source.close().await;
            target.close().await;
        }
        ShardsCommand::Abandon { root, to } => {
            let (source, target) = stores(&directory, &root, to).await?;
            billing_store::shard::abandon_move(&source, &target, &root, clock()).await?;
            eprintln!("gpubill: abandoned the move of {root} to shard {to}");
        }
    }
    directory.close().await;
    Ok(())
}

/// The stores of the shard holding `root` now and of shard `to`.
async fn stores(directory: &Directory, root: &str, to: u32) -> anyhow::Result<(Store, Store)> {
    let shards = directory.shards().await?;
    let count = shards
        .first()
        .map(|s| s.count)
        .context("the directory has no shards: add them with `gpubill shards add`")?;
    let from = directory.holder(root, count).await?;
    let entry = |i: u32| {
        shards
            .iter()
            .find(|s| s.shard == i)
            .with_context(|| format!("shard {i} of {count} is not in the directory"))
    };
    let open = async |i: u32| -> anyhow::Result<Store> {
        let e = entry(i)?;
        Ok(Store::open(&e.database_url)
            .await
            .with_context(|| format!("cannot open shard {i}'s database"))?
            .with_shard(Shard { index: i, count }))
    };
    Ok((open(from).await?, open(to).await?))
}

/// A database URL without its password.
fn masked(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_are_masked() {
        assert_eq!(
            super::masked("postgres://bill:s3cret@db:5432/shard0"),
            "postgres://bill:***@db:5432/shard0"
        );
        assert_eq!(
            super::masked("postgres://postgres@127.0.0.1:5433/s1"),
            "postgres://postgres@127.0.0.1:5433/s1"
        );
    }
}
