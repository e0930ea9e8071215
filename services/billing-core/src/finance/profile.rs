//! Buyer and seller profiles (issue 12): what a 增值税发票 (VAT fapiao) request needs besides
//! the amounts, printed on the invoice. One struct serves both sides: an account's profile is
//! the buyer, the platform's own (stored under a reserved key) the seller.
//!
//! | field | 发票 label | rule |
//! | --- | --- | --- |
//! | `name` | 名称 | required, 1 to [`NAME_CHARS_MAX`] characters, not blank |
//! | `tax_id` | 纳税人识别号 | 15, 17, 18 or 20 of `0-9 A-Z` (the 18 of a unified social credit code, or an older number) |
//! | `address` | 地址 | up to [`ADDRESS_CHARS_MAX`] |
//! | `phone` | 电话 | up to [`PHONE_CHARS_MAX`] of `0-9 + - ( ) space` and `ext`/`转` |
//! | `bank` | 开户行 | up to [`BANK_CHARS_MAX`] |
//! | `bank_account` | 账号 | up to [`BANK_ACCOUNT_CHARS_MAX`] of `0-9 A-Z - space` |
//! | `email` | 电子邮箱 | up to [`EMAIL_CHARS_MAX`], one `@` with text on both sides, no spaces |
//!
//! Every optional field may be omitted or `null`; when present it must not be empty. No field
//! holds a control character (a line break in a name would break the printed fapiao and the
//! CSV exports alike). The tax id is optional because an individual buyer has none; a
//! company's fapiao needs it, which only the issuer can judge. Validation is pure: the API
//! and a replay run the same function.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Longest `name` (名称), in characters: company names registered in China stay far below.
pub const NAME_CHARS_MAX: usize = 200;
/// Longest `address` (地址), in characters.
pub const ADDRESS_CHARS_MAX: usize = 200;
/// Longest `phone` (电话), in characters: room for a country code and an extension.
pub const PHONE_CHARS_MAX: usize = 40;
/// Longest `bank` (开户行), in characters: a bank and its branch.
pub const BANK_CHARS_MAX: usize = 100;
/// Longest `bank_account` (账号), in characters: Chinese accounts have up to 19 digits, an
/// IBAN up to 34 characters, with grouping spaces.
pub const BANK_ACCOUNT_CHARS_MAX: usize = 50;
/// Longest `email`, in characters (RFC 5321's path limit).
pub const EMAIL_CHARS_MAX: usize = 254;
/// The lengths a tax id (纳税人识别号) may have: 18 for a unified social credit code
/// (统一社会信用代码), 15, 17 and 20 for the numbers issued before it.
pub const TAX_ID_LENGTHS: [usize; 4] = [15, 17, 18, 20];

/// The names of the fields, in the order they are printed.
pub const FIELDS: [&str; 7] = [
    "name",
    "tax_id",
    "address",
    "phone",
    "bank",
    "bank_account",
    "email",
];

/// A buyer's or seller's profile, as stored and as `PUT .../profile` takes it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_account: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// What is wrong with one field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("is required")]
    Missing,
    #[error("must be a string (or null for an optional field)")]
    NotAString,
    #[error("is empty: omit it or use null when there is none")]
    Empty,
    #[error("is blank")]
    Blank,
    #[error("is {chars} characters, over the limit of {max}")]
    TooLong { chars: usize, max: usize },
    #[error("holds a control character (U+{code:04X}) at character {at}")]
    ControlCharacter { code: u32, at: usize },
    #[error(
        "must be 15, 17, 18 or 20 characters of 0-9 and upper-case A-Z (a unified social credit code has 18), got {0}"
    )]
    BadTaxId(String),
    #[error("may hold only digits, spaces, + - ( ) and ext or 转, got {0}")]
    BadPhone(String),
    #[error("may hold only digits, upper-case A-Z, spaces and -, got {0}")]
    BadBankAccount(String),
    #[error("must be one address like name@example.com, got {0}")]
    BadEmail(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error("the profile is not JSON: {0}")]
    NotJson(String),
    #[error("the profile must be a JSON object of {fields}", fields = FIELDS.join(", "))]
    NotAnObject,
    #[error("unknown field {0:?}: a profile has {fields}", fields = FIELDS.join(", "))]
    UnknownField(String),
    #[error("field {field}: {problem}")]
    Field {
        field: &'static str,
        problem: Problem,
    },
}

impl ProfileError {
    /// The field at fault, when one is.
    pub fn field(&self) -> Option<&str> {
        match self {
            ProfileError::UnknownField(f) => Some(f),
            ProfileError::Field { field, .. } => Some(field),
            ProfileError::NotJson(_) | ProfileError::NotAnObject => None,
        }
    }
}

fn bad(field: &'static str, problem: Problem) -> ProfileError {
    ProfileError::Field { field, problem }
}

/// At most 64 characters of a rejected value, quoted, for a message.
fn shown(value: &str) -> String {
    format!("{:?}", value.chars().take(64).collect::<String>())
}

impl Profile {
    /// Parses and validates a request body. Unlike plain serde, every error names its field
    /// (a number where a string belongs, an unknown key, a missing name).
    pub fn from_json(body: &[u8]) -> Result<Profile, ProfileError> {
        let value: Value =
            serde_json::from_slice(body).map_err(|e| ProfileError::NotJson(e.to_string()))?;
        let Value::Object(map) = value else {
            return Err(ProfileError::NotAnObject);
        };
        let mut strings: [Option<String>; FIELDS.len()] = Default::default();
        for (key, v) in map {
            let Some(i) = FIELDS.iter().position(|f| *f == key) else {
                return Err(ProfileError::UnknownField(
                    key.chars().take(64).collect::<String>(),
                ));
            };
            strings[i] = match v {
                Value::String(s) => Some(s),
                Value::Null => None,
                _ => return Err(bad(FIELDS[i], Problem::NotAString)),
            };
        }
        let [name, tax_id, address, phone, bank, bank_account, email] = strings;
        let profile = Profile {
            name: name.ok_or(bad("name", Problem::Missing))?,
            tax_id,
            address,
            phone,
            bank,
            bank_account,
            email,
        };
        profile.validate()?;
        Ok(profile)
    }

    /// Checks every field against the rules of the module header, in [`FIELDS`] order; the
    /// first broken rule is the error.
    pub fn validate(&self) -> Result<(), ProfileError> {
        text("name", &self.name, NAME_CHARS_MAX)?;
        if let Some(t) = &self.tax_id {
            text("tax_id", t, TAX_ID_LENGTHS[TAX_ID_LENGTHS.len() - 1])?;
            let ok = TAX_ID_LENGTHS.contains(&t.len())
                && t.bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase());
            if !ok {
                return Err(bad("tax_id", Problem::BadTaxId(shown(t))));
            }
        }
        if let Some(a) = &self.address {
            text("address", a, ADDRESS_CHARS_MAX)?;
        }
        if let Some(p) = &self.phone {
            text("phone", p, PHONE_CHARS_MAX)?;
            let rest = p.replace("ext", "").replace('转', "");
            let ok = rest.chars().any(|c| c.is_ascii_digit())
                && rest
                    .chars()
                    .all(|c| c.is_ascii_digit() || " +-()".contains(c));
            if !ok {
                return Err(bad("phone", Problem::BadPhone(shown(p))));
            }
        }
        if let Some(b) = &self.bank {
            text("bank", b, BANK_CHARS_MAX)?;
        }
        if let Some(b) = &self.bank_account {
            text("bank_account", b, BANK_ACCOUNT_CHARS_MAX)?;
            let ok = b.chars().any(|c| c.is_ascii_alphanumeric())
                && b.chars()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase() || " -".contains(c));
            if !ok {
                return Err(bad("bank_account", Problem::BadBankAccount(shown(b))));
            }
        }
        if let Some(e) = &self.email {
            text("email", e, EMAIL_CHARS_MAX)?;
            let ok = match e.split_once('@') {
                Some((local, domain)) => {
                    !local.is_empty()
                        && domain.contains('.')
                        && !domain.starts_with('.')
                        && !domain.ends_with('.')
                        && !domain.contains('@')
                        && !e.chars().any(char::is_whitespace)
                }
                None => false,
            };
            if !ok {
                return Err(bad("email", Problem::BadEmail(shown(e))));
            }
        }
        Ok(())
    }

    /// The fields that are set, as (name, value) in [`FIELDS`] order.
    pub fn fields(&self) -> Vec<(&'static str, &str)> {
        let optional = [
            ("tax_id", &self.tax_id),
            ("address", &self.address),
            ("phone", &self.phone),
            ("bank", &self.bank),
            ("bank_account", &self.bank_account),
            ("email", &self.email),
        ];
        std::iter::once(("name", self.name.as_str()))
            .chain(
                optional
                    .into_iter()
                    .filter_map(|(k, v)| v.as_deref().map(|v| (k, v))),
            )
            .collect()
    }
}

/// The rules every field shares: not empty, at most `max` characters, no control character,
/// not blank ([`crate::common::text::check_name`]).
fn text(field: &'static str, value: &str, max: usize) -> Result<(), ProfileError> {
    if value.is_empty() {
        return Err(bad(field, Problem::Empty));
    }
    let chars = value.chars().count();
    if chars > max {
        return Err(bad(field, Problem::TooLong { chars, max }));
    }
    // One rule for names (issue 24.6): no control character, not only invisible characters
    // (a name of U+202E and U+200B is not blank to `trim` yet prints as nothing).
    match crate::common::text::check_name(value) {
        Ok(()) => Ok(()),
        Err(crate::common::text::NameError::Empty) => Err(bad(field, Problem::Empty)),
        Err(crate::common::text::NameError::Invisible) => Err(bad(field, Problem::Blank)),
        Err(crate::common::text::NameError::Control { code, at }) => {
            Err(bad(field, Problem::ControlCharacter { code, at }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Profile, ProfileError> {
        Profile::from_json(json.as_bytes())
    }

    fn field_of(json: &str) -> String {
        let e = parse(json).expect_err(json);
        e.field().map(String::from).unwrap_or_default()
    }

    #[test]
    fn profile_full_chinese_company_is_accepted_and_round_trips() {
        let json = r#"{"name":"北京算力科技有限公司","tax_id":"91110108MA01ABCD2X",
            "address":"北京市海淀区中关村大街1号","phone":"010-62345678","bank":"中国工商银行北京中关村支行",
            "bank_account":"0200 0012 3456 7890 123","email":"finance@example.cn"}"#;
        let p = parse(json).unwrap();
        assert_eq!(p.name, "北京算力科技有限公司");
        assert_eq!(p.tax_id.as_deref(), Some("91110108MA01ABCD2X"));
        let back: Profile = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
        assert_eq!(p.fields().len(), 7);
    }

    #[test]
    fn profile_name_alone_is_enough_and_nulls_are_absent() {
        let p = parse(r#"{"name":"Zhang San","tax_id":null,"email":null}"#).unwrap();
        assert_eq!(
            p,
            Profile {
                name: "Zhang San".into(),
                ..Profile::default()
            }
        );
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"name":"Zhang San"}"#
        );
    }

    #[test]
    fn profile_tax_id_takes_the_four_lengths_of_digits_and_capitals() {
        for ok in [
            "110108123456789",      // 15
            "11010812345678901",    // 17
            "91110108MA01ABCD2X",   // 18
            "11010812345678901234", // 20
        ] {
            let json = format!(r#"{{"name":"A","tax_id":"{ok}"}}"#);
            assert!(parse(&json).is_ok(), "{ok}");
        }
        for bad in [
            "9111010812345678",      // 16
            "9111010",               // 7
            "91110108ma01abcd2x",    // lower case
            "91110108MA01ABCD2X1",   // 19
            "91110108MA01-BCD2X",    // punctuation
            "91110108MA01ＡBCD2X",   // a full-width letter
            "911101081234567890123", // 21
        ] {
            let json = format!(r#"{{"name":"A","tax_id":"{bad}"}}"#);
            let e = parse(&json).unwrap_err();
            assert!(
                matches!(
                    e,
                    ProfileError::Field {
                        field: "tax_id",
                        problem: Problem::BadTaxId(_) | Problem::TooLong { .. }
                    }
                ),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn profile_name_is_required_bounded_and_not_blank() {
        assert_eq!(
            parse(r#"{"tax_id":"91110108MA01ABCD2X"}"#).unwrap_err(),
            bad("name", Problem::Missing)
        );
        assert_eq!(
            parse(r#"{"name":""}"#).unwrap_err(),
            bad("name", Problem::Empty)
        );
        assert_eq!(
            parse(r#"{"name":"   "}"#).unwrap_err(),
            bad("name", Problem::Blank)
        );
        // 200 characters of CJK (600 bytes) is fine, 201 is not: characters, not bytes.
        let at_limit = "算".repeat(200);
        assert!(parse(&format!(r#"{{"name":"{at_limit}"}}"#)).is_ok());
        let over = "算".repeat(201);
        assert_eq!(
            parse(&format!(r#"{{"name":"{over}"}}"#)).unwrap_err(),
            bad(
                "name",
                Problem::TooLong {
                    chars: 201,
                    max: 200
                }
            )
        );
    }

    #[test]
    fn profile_control_characters_are_refused_in_every_field() {
        assert_eq!(
            parse(r#"{"name":"Acme\nLtd"}"#).unwrap_err(),
            bad("name", Problem::ControlCharacter { code: 0x0a, at: 4 })
        );
        for field in ["address", "bank"] {
            let json = format!(r#"{{"name":"A","{field}":"x\u0007y"}}"#);
            assert_eq!(field_of(&json), field);
        }
        assert_eq!(field_of(r#"{"name":"A","email":"a@b.cn\u0000"}"#), "email");
        let e = parse(r#"{"name":"A","address":"x\ty"}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "field address: holds a control character (U+0009) at character 1"
        );
    }

    #[test]
    fn profile_unknown_fields_and_wrong_types_name_the_field() {
        let e = parse(r#"{"name":"A","vat":"x"}"#).unwrap_err();
        assert_eq!(e, ProfileError::UnknownField("vat".into()));
        assert!(e.to_string().starts_with("unknown field \"vat\""), "{e}");
        assert_eq!(field_of(r#"{"name":"A","phone":10086}"#), "phone");
        assert_eq!(field_of(r#"{"name":7}"#), "name");
        assert_eq!(parse("[1]").unwrap_err(), ProfileError::NotAnObject);
        assert!(matches!(parse("{").unwrap_err(), ProfileError::NotJson(_)));
        // Stored profiles read back through serde refuse unknown fields too.
        assert!(serde_json::from_str::<Profile>(r#"{"name":"A","vat":"x"}"#).is_err());
    }

    #[test]
    fn profile_phone_bank_account_and_email_have_their_shapes() {
        for ok in [
            "010-62345678",
            "+86 10 6234 5678",
            "(010) 6234-5678 ext 12",
            "62345678转801",
        ] {
            assert!(
                parse(&format!(r#"{{"name":"A","phone":"{ok}"}}"#)).is_ok(),
                "{ok}"
            );
        }
        for bad_phone in ["call me", "---", "010;62345678"] {
            assert_eq!(
                field_of(&format!(r#"{{"name":"A","phone":"{bad_phone}"}}"#)),
                "phone"
            );
        }
        assert!(parse(r#"{"name":"A","bank_account":"DE89 3704 0044 0532 0130 00"}"#).is_ok());
        assert_eq!(
            field_of(r#"{"name":"A","bank_account":"12/34"}"#),
            "bank_account"
        );
        for bad_email in [
            "finance",
            "@example.cn",
            "a@b",
            "a@.cn",
            "a b@c.cn",
            "a@b@c.cn",
        ] {
            assert_eq!(
                field_of(&format!(r#"{{"name":"A","email":"{bad_email}"}}"#)),
                "email"
            );
        }
        assert_eq!(field_of(r#"{"name":"A","email":""}"#), "email");
    }
}
