//! Price books and account terms as stored, and the provisional (open-period) rating.

pub(crate) mod books;
pub(crate) mod catalog;
pub(crate) mod issued;
pub(crate) mod loaded;
pub(crate) mod moves;
pub(crate) mod org_now;
pub(crate) mod payers;
pub(crate) mod pricebooks;
pub(crate) mod provisional;
pub(crate) mod provisional_reads;
pub(crate) mod terms;
pub(crate) mod terms_merge;
