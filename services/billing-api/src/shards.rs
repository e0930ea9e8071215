//! Issue 29: in a sharded deployment every shard's API answers for the organization trees it
//! holds and forwards a request for another tree to the shard that holds it (the directory's
//! `shards.api_url`, `billing_store::shard::directory`), so a client may call any shard.
//!
//! Which tree a request is for, first found wins: the account in the path
//! (`/v1/accounts/{id}/...`, `/v1/admin/accounts/{id}/...`), the `account` query parameter,
//! the `id` of a new account (`POST /v1/admin/accounts`). A customer key the shard does not
//! hold is tried on the other shards in turn (a key lives with its account), and the first
//! answer that is not 401 is returned. Anything else (price books, closes, exports, ingest)
//! is answered by the shard called. A forwarded request carries [`FORWARDED_BY`] and is never
//! forwarded again.

use billing_store::shard::Shard;
use billing_store::shard::directory::Directory;

/// The header a forwarded request carries: the shard that forwarded it.
pub const FORWARDED_BY: &str = "x-gpubill-forwarded-by";

/// What a shard's API needs to forward requests.
pub struct ShardRoutes {
    pub shard: Shard,
    pub directory: Directory,
    pub(crate) client: reqwest::Client,
}

impl ShardRoutes {
    pub fn new(shard: Shard, directory: Directory) -> ShardRoutes {
        ShardRoutes {
            shard,
            directory,
            client: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(30))
                .build()
                .unwrap_or_default(),
        }
    }
}
