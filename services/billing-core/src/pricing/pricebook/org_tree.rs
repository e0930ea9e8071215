//! The tree of an organization (section 18), apart from who pays: every account's parent as
//! `[[accounts]]` names it, whether the account pays for itself or not. API keys are scoped
//! by it (issue 27, roles and scopes): a key issued for an account reaches that account and
//! the accounts below it, never above or beside.

use super::org::{MAX_DEPTH, Org};

impl Org {
    /// The account's parent (None: a root, or an account the organization does not name).
    pub fn parent_of(&self, account: &str) -> Option<&str> {
        self.parents.get(account).map(String::as_str)
    }

    /// The account's ancestors: its parent first, up to the root (empty for a root). A parent
    /// that `[[accounts]]` does not list is a root.
    pub fn ancestors(&self, account: &str) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        let mut at = account;
        // `build` refuses cycles and paths longer than MAX_DEPTH; the bound keeps a default
        // or hand-made value from looping all the same.
        while let Some(parent) = self.parent_of(at) {
            if parent == account || out.contains(&parent) || out.len() > MAX_DEPTH {
                break;
            }
            out.push(parent);
            at = parent;
        }
        out
    }

    /// Every account the organization names: each with a parent, and each parent.
    pub fn accounts(&self) -> impl Iterator<Item = &str> {
        self.parents
            .iter()
            .flat_map(|(a, p)| [a.as_str(), p.as_str()])
    }

    /// The root of the account's tree: its farthest ancestor, or itself (issue 29: whole
    /// trees live on one shard, so this is the shard key).
    pub fn root_of<'a>(&'a self, account: &'a str) -> &'a str {
        self.ancestors(account).last().copied().unwrap_or(account)
    }

    /// Whether `account` lies within `scope`: it is `scope` or `scope` is one of its
    /// ancestors.
    pub fn within(&self, scope: &str, account: &str) -> bool {
        account == scope || self.ancestors(account).contains(&scope)
    }
}

#[cfg(test)]
mod tests {
    use super::super::org::build;
    use super::super::regions::AccountSettings;
    use super::*;

    /// `(id, parent, pays = "parent")` in `[[accounts]]` order.
    fn org(entries: &[(&str, Option<&str>, bool)]) -> Org {
        let settings: Vec<AccountSettings> = entries
            .iter()
            .enumerate()
            .map(|(index, (id, parent, pays_parent))| AccountSettings {
                index,
                id: id.to_string(),
                parent: parent.map(str::to_string),
                pays_parent: *pays_parent,
                timezone: None,
                moves: Vec::new(),
            })
            .collect();
        build(&settings).unwrap()
    }

    /// root -> {team-a, team-b}, team-a -> {a1}; team-b pays for itself, the others do not.
    fn worked() -> Org {
        org(&[
            ("root", None, false),
            ("team-a", Some("root"), true),
            ("team-b", Some("root"), false),
            ("a1", Some("team-a"), true),
        ])
    }

    #[test]
    fn parents_are_kept_whoever_pays() {
        let o = worked();
        assert_eq!(o.parent_of("root"), None);
        assert_eq!(o.parent_of("team-a"), Some("root"));
        // team-b pays for itself and still has its parent.
        assert_eq!(o.parent_of("team-b"), Some("root"));
        assert_eq!(o.payer_of("team-b"), "team-b");
        assert_eq!(o.parent_of("a1"), Some("team-a"));
        assert_eq!(o.payer_of("a1"), "root");
        assert_eq!(o.parent_of("stranger"), None);
    }

    #[test]
    fn a_tree_has_one_root_and_a_stranger_is_its_own() {
        let o = worked();
        for a in ["a1", "team-a", "team-b", "root"] {
            assert_eq!(o.root_of(a), "root", "{a}");
        }
        assert_eq!(o.root_of("stranger"), "stranger");
        let mut named: Vec<&str> = o.accounts().collect();
        named.sort_unstable();
        named.dedup();
        assert_eq!(named, ["a1", "root", "team-a", "team-b"]);
    }

    #[test]
    fn ancestors_run_parent_first_to_the_root() {
        let o = worked();
        assert_eq!(o.ancestors("a1"), vec!["team-a", "root"]);
        assert_eq!(o.ancestors("team-b"), vec!["root"]);
        assert!(o.ancestors("root").is_empty());
        assert!(o.ancestors("stranger").is_empty());
    }

    #[test]
    fn within_is_self_or_below_never_above_or_beside() {
        let o = worked();
        for account in ["root", "team-a", "team-b", "a1"] {
            assert!(o.within("root", account), "{account} is within root");
            assert!(o.within(account, account), "{account} is within itself");
        }
        assert!(o.within("team-a", "a1"));
        // Above and beside.
        assert!(!o.within("team-a", "root"));
        assert!(!o.within("a1", "team-a"));
        assert!(!o.within("team-a", "team-b"));
        assert!(!o.within("team-b", "a1"));
        // Unknown accounts are within nothing but themselves.
        assert!(!o.within("root", "stranger"));
        assert!(!o.within("stranger", "root"));
        assert!(o.within("stranger", "stranger"));
    }

    #[test]
    fn a_parent_not_listed_is_a_root_and_the_deepest_path_is_whole() {
        // A chain of MAX_DEPTH accounts under a parent `[[accounts]]` does not list.
        let names: Vec<String> = (0..MAX_DEPTH).map(|i| format!("n{i}")).collect();
        let mut entries: Vec<(&str, Option<&str>, bool)> =
            vec![(&names[0], Some("outside"), false)];
        for i in 1..MAX_DEPTH - 1 {
            entries.push((&names[i], Some(&names[i - 1]), i % 2 == 0));
        }
        let o = org(&entries);
        let deepest = &names[MAX_DEPTH - 2];
        let mut expected: Vec<&str> = names[..MAX_DEPTH - 2]
            .iter()
            .rev()
            .map(String::as_str)
            .collect();
        expected.push("outside");
        assert_eq!(o.ancestors(deepest), expected);
        assert_eq!(o.parent_of("outside"), None);
        assert!(o.within("outside", deepest));
        assert!(o.within(&names[3], deepest));
        assert!(!o.within(deepest, &names[3]));
    }

    #[test]
    fn without_an_organization_every_account_is_its_own_scope() {
        let o = Org::default();
        assert!(o.within("acme", "acme"));
        assert!(!o.within("acme", "beta"));
        assert!(o.ancestors("acme").is_empty());
    }
}
