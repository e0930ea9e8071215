//! A small, strict JSON reader for event records: the hot path of metering.
//!
//! Events are flat objects with one nested `data` object, so instead of a general
//! deserializer this reads exactly the members gpubill needs as [`Scalar`]s (strings
//! borrowed when they hold no escapes) and skips everything else, validating the whole record
//! as RFC 8259 JSON on the way. It is about twice as fast as going through serde, and a
//! differential property test checks it against `serde_json` on random and mutated input.
//!
//! Stricter than "last one wins": a repeated known member is an error. Arrays are never read
//! positionally as objects.

use std::borrow::Cow;

/// How deep unknown members may nest before the record is refused (as serde_json).
pub const MAX_DEPTH: usize = 128;

/// A JSON value as validation needs to see it: scalars kept, objects and arrays skipped.
#[derive(Debug, Default, Clone, PartialEq)]
pub enum Scalar<'a> {
    /// The member is not there.
    #[default]
    Absent,
    Null,
    Str(Cow<'a, str>),
    UInt(u64),
    NegInt(i64),
    /// Any other number (fraction, exponent or out of 64-bit range).
    Float,
    Bool,
    /// An object or an array.
    Compound,
    /// An object read member by member (only `data.tags`, section 18): its members as
    /// scalars, in record order (an object or array inside is [`Scalar::Compound`]).
    Members(Vec<(Cow<'a, str>, Scalar<'a>)>),
}

pub const EVENT_MEMBERS: [&str; 6] = ["specversion", "id", "source", "type", "subject", "time"];
pub const DATA_MEMBERS: [&str; 18] = [
    "lease",
    "resource",
    "sku",
    "class",
    "start",
    "end",
    "quantity",
    "dest",
    "bytes",
    // Part 2 (the rental events of `crate::rental`).
    "state",
    "at",
    "price_per_hour",
    "from",
    "node",
    "interface",
    "bytes_total",
    // Part 3 (section 19): the region of usage, egress, counters and spot prices.
    "region",
    // Part 3 (section 18): the tags of `lease.tags`, an object of strings.
    "tags",
];

/// The position of `tags` in [`DATA_MEMBERS`]: read as [`Scalar::Members`] when an object.
pub const TAGS_MEMBER: usize = 17;

/// The data members of a record, in the order of [`DATA_MEMBERS`].
pub type DataMembers<'a> = [Scalar<'a>; 18];

/// The members of an event record.
#[derive(Debug, Default, PartialEq)]
pub struct EventObject<'a> {
    /// In the order of [`EVENT_MEMBERS`].
    pub attrs: [Scalar<'a>; 6],
    /// `data`: None when absent or null; `Some(Err(()))` when not an object.
    pub data: Option<Result<DataMembers<'a>, ()>>,
}

fn event_member(k: &str) -> Option<usize> {
    EVENT_MEMBERS.iter().position(|m| *m == k)
}

fn data_member(k: &str) -> Option<usize> {
    // A match compiles to a length switch and a few compares: cheaper than a linear scan.
    Some(match k {
        "lease" => 0,
        "resource" => 1,
        "sku" => 2,
        "class" => 3,
        "start" => 4,
        "end" => 5,
        "quantity" => 6,
        "dest" => 7,
        "bytes" => 8,
        "state" => 9,
        "at" => 10,
        "price_per_hour" => 11,
        "from" => 12,
        "node" => 13,
        "interface" => 14,
        "bytes_total" => 15,
        "region" => 16,
        "tags" => 17,
        _ => return None,
    })
}

/// Why a record is not a JSON object (message for the dead letter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub at: usize,
    pub what: &'static str,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.what, self.at)
    }
}

type R<T> = Result<T, SyntaxError>;

/// Whether a JSON number (valid grammar) is too large for a double, which serde_json
/// refuses as "number out of range". Decided on the decimal digits, without floating point:
/// the value's magnitude is `0.d1d2d3... x 10^(e10 + 1)`; doubles end just below
/// 1.7976931348623158e308 (values from there on round to infinity).
fn beyond_double_range(text: &str) -> bool {
    let t = text.trim_start_matches('-');
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], &t[i + 1..]),
        None => (t, "0"),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = int.chars().chain(frac.chars()).collect();
    let lead = digits.len() - digits.trim_start_matches('0').len();
    let significant = digits.trim_start_matches('0').trim_end_matches('0');
    if significant.is_empty() {
        return false;
    }
    // Decimal exponent of the first significant digit.
    let exp: i64 = match exp.trim_start_matches('+').parse::<i64>() {
        Ok(e) => e,
        // An exponent beyond i64: huge when positive, zero when negative.
        Err(_) => return !exp.starts_with('-'),
    };
    let e10 = (int.len() as i64 - 1 - lead as i64).saturating_add(exp);
    match e10.cmp(&308) {
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Equal => significant >= "17976931348623158",
    }
}

/// Bytes that end a plain run inside a string: the quote, the backslash, control characters.
static STRING_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = true;
        c += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

struct Reader<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
}

/// Reads one event record: a JSON object and nothing after it but whitespace.
pub fn read_event(text: &str) -> R<EventObject<'_>> {
    let mut r = Reader {
        text,
        b: text.as_bytes(),
        i: 0,
    };
    r.ws();
    if r.peek() != Some(b'{') {
        return r.err("expected a JSON object");
    }
    r.i += 1;
    let mut obj = EventObject::default();
    let mut seen_data = false;
    r.members(|r, key| {
        if let Some(k) = event_member(key) {
            if !matches!(obj.attrs[k], Scalar::Absent) {
                return r.err("duplicate member");
            }
            obj.attrs[k] = r.scalar(0)?;
        } else if key == "data" {
            if seen_data {
                return r.err("duplicate member");
            }
            seen_data = true;
            obj.data = match r.peek() {
                Some(b'{') => {
                    r.i += 1;
                    let mut data: DataMembers<'_> = Default::default();
                    r.members(|r, key| {
                        match data_member(key) {
                            Some(k) if !matches!(data[k], Scalar::Absent) => {
                                return r.err("duplicate member");
                            }
                            Some(TAGS_MEMBER) if r.peek() == Some(b'{') => {
                                data[TAGS_MEMBER] = r.object_members(1)?
                            }
                            Some(k) => data[k] = r.scalar(1)?,
                            None => r.skip(1)?,
                        }
                        Ok(())
                    })?;
                    Some(Ok(data))
                }
                _ => match r.scalar(0)? {
                    Scalar::Null => None,
                    _ => Some(Err(())),
                },
            };
        } else {
            r.skip(0)?;
        }
        Ok(())
    })?;
    r.ws();
    if r.i != r.b.len() {
        return r.err("trailing characters after the object");
    }
    Ok(obj)
}

impl<'a> Reader<'a> {
    fn err<T>(&self, what: &'static str) -> R<T> {
        Err(SyntaxError { at: self.i, what })
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    /// After `{`: `"key": value` pairs until `}`; `f` reads each value.
    fn members(&mut self, mut f: impl FnMut(&mut Self, &str) -> R<()>) -> R<()> {
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return self.err("expected a member name");
            }
            self.i += 1;
            let key = self.string()?;
            self.ws();
            if self.peek() != Some(b':') {
                return self.err("expected ':'");
            }
            self.i += 1;
            self.ws();
            f(self, &key)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return self.err("expected ',' or '}'"),
            }
        }
    }

    /// A value as a [`Scalar`]; objects and arrays are validated and skipped.
    fn scalar(&mut self, depth: usize) -> R<Scalar<'a>> {
        match self.peek() {
            Some(b'"') => {
                self.i += 1;
                Ok(Scalar::Str(self.string()?))
            }
            Some(b'{' | b'[') => {
                self.skip(depth)?;
                Ok(Scalar::Compound)
            }
            Some(b't') => self.literal("true", Scalar::Bool),
            Some(b'f') => self.literal("false", Scalar::Bool),
            Some(b'n') => self.literal("null", Scalar::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => self.err("expected a value"),
        }
    }

    /// An object's members as scalars (nested objects and arrays validated and skipped as
    /// [`Scalar::Compound`]), in record order; a repeated name is kept (the caller refuses it).
    fn object_members(&mut self, depth: usize) -> R<Scalar<'a>> {
        if depth >= MAX_DEPTH {
            return self.err("nested too deeply");
        }
        self.i += 1;
        let mut out = Vec::new();
        self.members(|r, key| {
            let key: Cow<'a, str> = Cow::Owned(key.to_string());
            out.push((key, r.scalar(depth + 1)?));
            Ok(())
        })?;
        Ok(Scalar::Members(out))
    }

    fn literal(&mut self, word: &'static str, v: Scalar<'a>) -> R<Scalar<'a>> {
        if self.b[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            self.err("invalid literal")
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> R<Scalar<'a>> {
        let start = self.i;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.i += 1;
        }
        let int_start = self.i;
        let n = self.digits();
        if n == 0 || (n > 1 && self.b[int_start] == b'0') {
            return self.err("invalid number");
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return self.err("invalid number");
            }
            integral = false;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return self.err("invalid number");
            }
            integral = false;
        }
        let text = &self.text[start..self.i];
        if !integral {
            return if beyond_double_range(text) {
                self.err("number out of range")
            } else {
                Ok(Scalar::Float)
            };
        }
        Ok(if negative {
            match text.parse::<i64>() {
                // serde_json reads -0 as the float -0.0; so do we.
                Ok(0) => Scalar::Float,
                Ok(v) => Scalar::NegInt(v),
                Err(_) => Scalar::Float,
            }
        } else {
            match text.parse::<u64>() {
                Ok(v) => Scalar::UInt(v),
                Err(_) if beyond_double_range(text) => return self.err("number out of range"),
                Err(_) => Scalar::Float,
            }
        })
    }

    /// After the opening quote: the string's value, borrowed when it has no escapes.
    fn string(&mut self) -> R<Cow<'a, str>> {
        let start = self.i;
        // Event strings are short: a table lookup per byte beats SIMD set-up.
        let Some(n) = self.b[start..]
            .iter()
            .position(|&c| STRING_STOP[c as usize])
        else {
            self.i = self.b.len();
            return self.err("unterminated string");
        };
        self.i = start + n;
        match self.b[self.i] {
            b'"' => {
                self.i += 1;
                return Ok(Cow::Borrowed(&self.text[start..start + n]));
            }
            b'\\' => {}
            _ => return self.err("control character in a string"),
        }
        let mut out = String::with_capacity(self.i - start + 16);
        out.push_str(&self.text[start..self.i]);
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = match self.peek() {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.i += 1;
                            let c = self.unicode_escape()?;
                            out.push(c);
                            continue;
                        }
                        _ => return self.err("invalid escape"),
                    };
                    self.i += 1;
                    out.push(c);
                }
                Some(0..=0x1f) => return self.err("control character in a string"),
                Some(_) => {
                    // Copy the run up to the next quote or backslash (valid UTF-8 already).
                    let run = self.i;
                    while let Some(c) = self.peek() {
                        if c == b'"' || c == b'\\' || c < 0x20 {
                            break;
                        }
                        self.i += 1;
                    }
                    out.push_str(&self.text[run..self.i]);
                }
                None => return self.err("unterminated string"),
            }
        }
    }

    fn hex4(&mut self) -> R<u32> {
        let Some(h) = self.b.get(self.i..self.i + 4) else {
            return self.err("invalid \\u escape");
        };
        let mut v = 0u32;
        for &c in h {
            let d = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => return self.err("invalid \\u escape"),
            };
            v = v * 16 + d as u32;
        }
        self.i += 4;
        Ok(v)
    }

    /// After `\u`: one character, joining a surrogate pair.
    fn unicode_escape(&mut self) -> R<char> {
        let hi = self.hex4()?;
        let code = match hi {
            0xD800..=0xDBFF => {
                if !self.b[self.i..].starts_with(b"\\u") {
                    return self.err("lone leading surrogate in \\u escape");
                }
                self.i += 2;
                let lo = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&lo) {
                    return self.err("invalid trailing surrogate in \\u escape");
                }
                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
            }
            0xDC00..=0xDFFF => return self.err("lone trailing surrogate in \\u escape"),
            c => c,
        };
        char::from_u32(code).map_or_else(|| self.err("invalid \\u escape"), Ok)
    }

    /// Validates and skips one value of any kind.
    fn skip(&mut self, depth: usize) -> R<()> {
        if depth >= MAX_DEPTH {
            return self.err("nested too deeply");
        }
        match self.peek() {
            Some(b'{') => {
                self.i += 1;
                self.members(|r, _| r.skip(depth + 1))
            }
            Some(b'[') => {
                self.i += 1;
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(());
                }
                loop {
                    self.ws();
                    self.skip(depth + 1)?;
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(());
                        }
                        _ => return self.err("expected ',' or ']'"),
                    }
                }
            }
            _ => self.scalar(depth).map(|_| ()),
        }
    }
}

/// Why a batch body could not be split into records at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitError {
    pub at: usize,
    pub what: &'static str,
}

impl std::fmt::Display for SplitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.what, self.at)
    }
}

/// Splits a JSON array of records (a batch body) into the raw text of each element, without
/// judging the elements: one that is not valid JSON (an invalid escape, a raw control
/// character, a trailing comma inside it) is still one element, which decoding then
/// dead-letters as `malformed_json` while its neighbours are stored. Only the array's own
/// structure can fail the whole body: not an array, an element that never ends (unbalanced
/// brackets or an unterminated string reach the end of the body), an empty element
/// (`[a,,b]`, `[a,]`), or text after the closing bracket. At most `max` elements (more is an
/// error). Works on bytes: an element that is not UTF-8 is one malformed element too.
/// Never panics; allocates one slice per element.
pub fn split_array(b: &[u8], max: usize) -> Result<Vec<&[u8]>, SplitError> {
    let ws = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let mut i = 0;
    while i < b.len() && ws(b[i]) {
        i += 1;
    }
    if b.get(i) != Some(&b'[') {
        return Err(SplitError {
            at: i,
            what: "the body is not a JSON array of events",
        });
    }
    i += 1;
    let mut out = Vec::new();
    loop {
        while i < b.len() && ws(b[i]) {
            i += 1;
        }
        match b.get(i) {
            None => {
                return Err(SplitError {
                    at: i,
                    what: "the array is not closed",
                });
            }
            Some(b']') if out.is_empty() => {
                i += 1;
                break;
            }
            Some(b',' | b']') => {
                return Err(SplitError {
                    at: i,
                    what: "an empty element",
                });
            }
            _ => {}
        }
        let start = i;
        let (mut depth, mut in_string) = (0usize, false);
        let end = loop {
            let Some(&c) = b.get(i) else {
                return Err(SplitError {
                    at: start,
                    what: "an element that never ends (unbalanced brackets or an unterminated string)",
                });
            };
            if in_string {
                match c {
                    b'\\' => i += 1,
                    b'"' => in_string = false,
                    _ => {}
                }
            } else {
                match c {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' if depth > 0 => depth -= 1,
                    b',' | b']' if depth == 0 => break i,
                    _ => {}
                }
            }
            i += 1;
        };
        if out.len() == max {
            return Err(SplitError {
                at: start,
                what: "more elements than one batch takes",
            });
        }
        let mut last = end;
        while last > start && ws(b[last - 1]) {
            last -= 1;
        }
        out.push(&b[start..last]);
        i = end + 1;
        if b[end] == b']' {
            break;
        }
    }
    while i < b.len() && ws(b[i]) {
        i += 1;
    }
    if i < b.len() {
        return Err(SplitError {
            at: i,
            what: "text after the array",
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
