//! A shard and the key trees are placed by (issue 29): which shard of a deployment holds the
//! tree of a root account. No I/O: the store, the engine and any router compute it alike.

use billing_core::pricebook::PriceBook;

/// One shard of `count`: `index` in `0..count`. Parsed from `index/count` (`0/2`, `1/2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// Most shards a deployment may have (the directory's own limit; a hash needs far fewer).
pub const MAX_SHARDS: u32 = 1024;

/// A shard that is not written `INDEX/COUNT` with `INDEX < COUNT <= MAX_SHARDS`.
#[derive(Debug, thiserror::Error)]
#[error("shard {text:?}: {why} (write INDEX/COUNT, e.g. 0/2 for the first of two)")]
pub struct ShardParseError {
    text: String,
    why: String,
}

impl std::str::FromStr for Shard {
    type Err = ShardParseError;

    fn from_str(text: &str) -> Result<Shard, ShardParseError> {
        let bad = |why: &str| ShardParseError {
            text: text.to_string(),
            why: why.to_string(),
        };
        let (index, count) = text.split_once('/').ok_or_else(|| bad("no '/'"))?;
        let index: u32 = index
            .trim()
            .parse()
            .map_err(|_| bad("INDEX is not a number"))?;
        let count: u32 = count
            .trim()
            .parse()
            .map_err(|_| bad("COUNT is not a number"))?;
        if count == 0 || count > MAX_SHARDS {
            return Err(bad(&format!("COUNT must be 1 to {MAX_SHARDS}")));
        }
        if index >= count {
            return Err(bad("INDEX must be below COUNT"));
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The shard of `count` that holds the tree rooted at `root`: the first 8 bytes of the root's
/// SHA-256, big-endian, modulo `count`. Stable across versions, platforms and languages (a
/// producer or a router can compute it: `sha256(root)[0..8] mod count`).
pub fn shard_of_root(root: &str, count: u32) -> u32 {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(root.as_bytes());
    let mut head = [0u8; 8];
    head.copy_from_slice(&digest[..8]);
    (u64::from_be_bytes(head) % u64::from(count.max(1))) as u32
}

/// The root of the tree `account` (an account or a domain id `account@region`) belongs to,
/// in `book`'s organization (no book: the account itself).
pub fn root_of<'a>(book: Option<&'a PriceBook>, account: &'a str) -> &'a str {
    let account = billing_core::domain::Domain::parse(account).account;
    match book {
        Some(b) => b.org.root_of(account),
        None => account,
    }
}

impl Shard {
    /// What names this shard's own consumer group and commands topic: `shard-0-of-2`. Each
    /// shard reads every partition of the usage topic (a group shared by two shards would
    /// split them) and replays only its own commands.
    pub fn suffix(&self) -> String {
        format!("shard-{}-of-{}", self.index, self.count)
    }

    /// `name` of the whole deployment as this shard's own: `{name}.shard-0-of-2`.
    pub fn own(&self, name: &str) -> String {
        format!("{name}.{}", self.suffix())
    }

    /// Whether this shard holds `account`'s tree.
    pub fn holds(&self, book: Option<&PriceBook>, account: &str) -> bool {
        shard_of_root(root_of(book, account), self.count) == self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_is_written_index_slash_count() {
        let s: Shard = "1/4".parse().unwrap();
        assert_eq!(s, Shard { index: 1, count: 4 });
        assert_eq!(s.to_string(), "1/4");
        for bad in ["1", "4/4", "0/0", "a/2", "0/2000"] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains("INDEX/COUNT"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_root_hashes_to_one_shard_by_its_digest() {
        // Worked by hand (Python's hashlib): sha256("acme") begins 82 2b 33 ad 87 c1 48 a0,
        // 9379647469329139872 as a big-endian u64, even: shard 0 of 2 and of 4; "corp"
        // begins 19 f4 c6 84 a3 ff 4f 2d, 1870338018254999341: shard 1 of 2 and of 4.
        assert_eq!(shard_of_root("acme", 2), 0);
        assert_eq!(shard_of_root("acme", 4), 0);
        assert_eq!(shard_of_root("corp", 2), 1);
        assert_eq!(shard_of_root("corp", 4), 1);
        assert_eq!(shard_of_root("acme", 1), 0);
        // Every shard of four gets some of a thousand roots, and each root exactly one.
        let mut per = [0u32; 4];
        for i in 0..1000 {
            per[shard_of_root(&format!("acct-{i}"), 4) as usize] += 1;
        }
        assert!(per.iter().all(|&n| n > 200), "{per:?}");
        assert_eq!(per.iter().sum::<u32>(), 1000);
    }

    #[test]
    fn a_whole_tree_goes_where_its_root_goes() {
        let book = PriceBook::from_toml(
            r#"
currency = "CNY"
[skus."gpu.h100-80g"]
rate_per_hour = "36"
[[accounts]]
id = "corp"
[[accounts]]
id = "team-a"
parent = "corp"
pays = "parent"
[[accounts]]
id = "a1"
parent = "team-a"
"#,
        )
        .unwrap();
        let count = 2;
        let home = shard_of_root("corp", count);
        let s = Shard { index: home, count };
        for a in ["corp", "team-a", "a1", "a1@eu-west"] {
            assert!(s.holds(Some(&book), a), "{a}");
        }
        assert_eq!(root_of(Some(&book), "a1@eu-west"), "corp");
        assert_eq!(root_of(None, "a1@eu-west"), "a1");
    }
}
