//! The check at connection time, against DNS rebinding: the HTTP client resolves every host
//! through [`GuardedResolver`], which refuses the whole name if one of its addresses is not
//! allowed, so the client connects only to addresses checked a moment before. IP literals never
//! reach a resolver; [`crate::target::check_url`] checks them before each attempt.

use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::target::{AddressPolicy, resolve_checked};

/// A DNS resolver for reqwest that returns only addresses the policy allows.
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    policy: Arc<AddressPolicy>,
}

impl GuardedResolver {
    /// A resolver enforcing `policy`.
    pub fn new(policy: Arc<AddressPolicy>) -> GuardedResolver {
        GuardedResolver { policy }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = Arc::clone(&self.policy);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // Port 0: the connector puts the URL's port on the addresses.
            let addrs = resolve_checked(&host, 0, &policy).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}
