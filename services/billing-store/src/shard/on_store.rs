//! What a shard adds to the store (issue 29): the root of an account's tree, whether the
//! store holds a tree now, and keeping trees whole across organization changes.

use super::key::{Shard, root_of};
use super::placements::Placements;
use billing_core::pricebook::PriceBook;

/// An organization change (a price book upload, an `accounts` term) must not carry an
/// account this shard holds data of (`known`: its account ids and billing domains) into a
/// tree it does not hold: the account's past usage and documents would stay here. Answers
/// what it would split, or None. The shard holding the account's data refuses; a shard that
/// never saw the account has nothing to keep whole.
pub(crate) fn split_by(
    shard: Shard,
    placements: &Placements,
    (old, new): (Option<&PriceBook>, &PriceBook),
    known: &std::collections::BTreeSet<String>,
) -> Option<String> {
    let accounts: std::collections::BTreeSet<&str> = known
        .iter()
        .map(|id| billing_core::domain::Domain::parse(id).account)
        .collect();
    accounts.into_iter().find_map(|a| {
        let (was, now) = (root_of(old, a), root_of(Some(new), a));
        (!placements.holds_now(shard, now)).then(|| {
            format!(
                "account {a:?} would leave the tree of {was:?} for the tree of {now:?}, which \
                 shard {shard} does not hold: move the tree of {now:?} to shard {} first \
                 (gpubill shards move), or {a:?}'s tree to the shard of {now:?}",
                shard.index
            )
        })
    })
}

impl crate::conn::store::Store {
    /// Refuses, in `tx`, an organization change from `old` to `new` that would split a tree
    /// across shards ([`split_by`]); nothing to check unless this store is a shard.
    pub(crate) async fn keep_trees_whole(
        &self,
        conn: &mut dyn crate::conn::db::Conn,
        old: Option<&PriceBook>,
        new: &PriceBook,
    ) -> crate::conn::error::Result<()> {
        let Some(shard) = self.shard else {
            return Ok(());
        };
        let placements = Placements::load(conn).await?;
        let known = crate::admin::accounts::known_in(conn).await?;
        match split_by(shard, &placements, (old, new), &known) {
            Some(why) => Err(crate::conn::error::StoreError::SplitTree(why)),
            None => Ok(()),
        }
    }

    /// Whether this store holds `account`'s tree (always, unless it is a shard).
    /// `placements`: this shard's `tree_moves` (`shard::placements`).
    pub(crate) fn holds(
        &self,
        book: Option<&billing_core::PriceBook>,
        placements: &Placements,
        account: &str,
    ) -> bool {
        self.shard
            .is_none_or(|s| placements.holds_now(s, root_of(book, account)))
    }

    /// The root of `account`'s tree as this store's folds see it (the latest price book's
    /// organization): the key the directory places trees by.
    pub async fn tree_root(&self, account: &str) -> crate::conn::error::Result<String> {
        let mut conn = self.pool.acquire().await?;
        let books = self.books(&mut conn).await?;
        Ok(root_of(books.1.latest(), account).to_string())
    }
}
