//! The low-level helpers every domain shares: the one decimal grammar ([`decimal`]), rounding
//! money ([`money`]), RFC 3339 instants ([`timestamp`]), names people read ([`text`]) and
//! every limit of the core ([`limits`]).

pub mod decimal;
pub mod limits;
pub mod money;
pub mod text;
pub mod timestamp;
