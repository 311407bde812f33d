//! The `__coordination_state` records (formats §9): the key (registration and
//! lease kinds), the registration value, the lease value and tombstones, with
//! their encoders and strict decoders.
//!
//! Decoding consumes the buffer exactly and checks, in this order: version,
//! kind, strings (negative length, truncation, UTF-8), trailing bytes, then the
//! role/member checks and the lease token. No input can panic a decoder.
//! Standard library only.

use std::fmt;

use super::lease::LeaseTerm;
use super::token::{FencingToken, NegativeTokenError};
use crate::engine::bytes::Reader;

/// Longest role or member id, in UTF-8 bytes.
pub const MAX_ID_BYTES: usize = 249;
/// The only version of keys and values.
pub const RECORD_VERSION: i16 = 0;

/// The kind field of a key. Only [`RecordKind::REGISTRATION`] and
/// [`RecordKind::LEASE`] decode; other codes exist so they can be displayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordKind(i16);

impl RecordKind {
    /// A member's registration (kind 0).
    pub const REGISTRATION: RecordKind = RecordKind(0);
    /// The role's lease (kind 1).
    pub const LEASE: RecordKind = RecordKind(1);

    pub const fn from_code(code: i16) -> Self {
        RecordKind(code)
    }

    pub const fn code(self) -> i16 {
        self.0
    }

    pub const fn is_known(self) -> bool {
        self.0 == 0 || self.0 == 1
    }
}

impl fmt::Display for RecordKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RecordKind::REGISTRATION => f.write_str("registration"),
            RecordKind::LEASE => f.write_str("lease"),
            RecordKind(n) => write!(f, "RecordKind({n})"),
        }
    }
}

/// Which record part an error is about; displays as in formats §9.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordPart {
    Key,
    RegistrationValue,
    LeaseValue,
}

impl fmt::Display for RecordPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RecordPart::Key => "key",
            RecordPart::RegistrationValue => "registration value",
            RecordPart::LeaseValue => "lease value",
        })
    }
}

/// A role or member id that breaks the non-empty / 249-byte rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityError {
    EmptyRole,
    EmptyMember,
    /// The role's length in bytes.
    RoleTooLong(usize),
    /// The member id's length in bytes.
    MemberTooLong(usize),
}

impl fmt::Display for IdentityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdentityError::EmptyRole => f.write_str("a coordination role must not be empty"),
            IdentityError::EmptyMember => f.write_str("a coordination member id must not be empty"),
            IdentityError::RoleTooLong(n) => write!(
                f,
                "a coordination role of {n} bytes is longer than the {MAX_ID_BYTES}-byte maximum"
            ),
            IdentityError::MemberTooLong(n) => write!(
                f,
                "a coordination member id of {n} bytes is longer than the {MAX_ID_BYTES}-byte maximum"
            ),
        }
    }
}

impl std::error::Error for IdentityError {}

/// Checks a role: non-empty, at most [`MAX_ID_BYTES`] bytes.
pub fn check_role(role: &str) -> Result<(), IdentityError> {
    match role.len() {
        0 => Err(IdentityError::EmptyRole),
        n if n > MAX_ID_BYTES => Err(IdentityError::RoleTooLong(n)),
        _ => Ok(()),
    }
}

/// Checks a member id: non-empty, at most [`MAX_ID_BYTES`] bytes.
pub fn check_member(member: &str) -> Result<(), IdentityError> {
    match member.len() {
        0 => Err(IdentityError::EmptyMember),
        n if n > MAX_ID_BYTES => Err(IdentityError::MemberTooLong(n)),
        _ => Ok(()),
    }
}

/// Why a key or value failed to decode; messages are frozen (formats §9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordError {
    Truncated(RecordPart),
    TrailingBytes(RecordPart),
    UnsupportedVersion {
        part: RecordPart,
        version: i16,
    },
    /// Always about the key.
    UnknownKind(i16),
    NegativeLength {
        part: RecordPart,
        length: i16,
    },
    NonUtf8(RecordPart),
    MalformedIdentity {
        part: RecordPart,
        cause: IdentityError,
    },
    MalformedToken {
        part: RecordPart,
        cause: NegativeTokenError,
    },
    /// A lease key whose member string is not empty (always about the key).
    LeaseKeyMember(String),
}

impl RecordError {
    /// The record part the error is about.
    pub fn part(&self) -> RecordPart {
        match self {
            RecordError::Truncated(part)
            | RecordError::TrailingBytes(part)
            | RecordError::NonUtf8(part)
            | RecordError::UnsupportedVersion { part, .. }
            | RecordError::NegativeLength { part, .. }
            | RecordError::MalformedIdentity { part, .. }
            | RecordError::MalformedToken { part, .. } => *part,
            RecordError::UnknownKind(_) | RecordError::LeaseKeyMember(_) => RecordPart::Key,
        }
    }
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Truncated(part) => write!(f, "truncated coordination state {part}"),
            RecordError::TrailingBytes(part) => {
                write!(f, "trailing bytes in coordination state {part}")
            }
            RecordError::UnsupportedVersion { part, version } => {
                write!(f, "unsupported coordination state {part} version {version}")
            }
            RecordError::UnknownKind(kind) => {
                write!(f, "unknown coordination state record kind {kind}")
            }
            RecordError::NegativeLength { part, length } => {
                write!(
                    f,
                    "negative string length {length} in coordination state {part}"
                )
            }
            RecordError::NonUtf8(part) => {
                write!(f, "non-UTF-8 string in coordination state {part}")
            }
            RecordError::MalformedIdentity { part, cause } => {
                write!(f, "malformed coordination state {part}: {cause}")
            }
            RecordError::MalformedToken { part, cause } => {
                write!(f, "malformed coordination state {part}: {cause}")
            }
            RecordError::LeaseKeyMember(member) => write!(
                f,
                "a lease key carries the empty member string, got {member:?}"
            ),
        }
    }
}

impl std::error::Error for RecordError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RecordError::MalformedIdentity { cause, .. } => Some(cause),
            RecordError::MalformedToken { cause, .. } => Some(cause),
            _ => None,
        }
    }
}

/// An absent or empty value: deregisters a member (registration key) or clears
/// the lease (lease key).
pub fn is_tombstone(value: Option<&[u8]>) -> bool {
    value.is_none_or(<[u8]>::is_empty)
}

/// The key of a `__coordination_state` record. The member is the member id for
/// a registration and always empty for a lease.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CoordinationKey {
    kind: RecordKind,
    role: String,
    member: String,
}

impl CoordinationKey {
    /// The key of `member`'s registration for `role`.
    pub fn registration(
        role: impl Into<String>,
        member: impl Into<String>,
    ) -> Result<Self, IdentityError> {
        let (role, member) = (role.into(), member.into());
        check_role(&role)?;
        check_member(&member)?;
        Ok(CoordinationKey {
            kind: RecordKind::REGISTRATION,
            role,
            member,
        })
    }

    /// The key of `role`'s lease (its member is always empty).
    pub fn lease(role: impl Into<String>) -> Result<Self, IdentityError> {
        let role = role.into();
        check_role(&role)?;
        Ok(CoordinationKey {
            kind: RecordKind::LEASE,
            role,
            member: String::new(),
        })
    }

    pub fn kind(&self) -> RecordKind {
        self.kind
    }

    pub fn role(&self) -> &str {
        &self.role
    }

    /// The registered member id; empty for a lease key.
    pub fn member(&self) -> &str {
        &self.member
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + self.role.len() + self.member.len());
        out.extend_from_slice(&RECORD_VERSION.to_be_bytes());
        out.extend_from_slice(&self.kind.code().to_be_bytes());
        put_kstring(&mut out, &self.role);
        put_kstring(&mut out, &self.member);
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, RecordError> {
        let part = RecordPart::Key;
        let mut d = Decoder::new(bytes, part);
        d.version()?;
        let kind = RecordKind::from_code(d.i16()?);
        if !kind.is_known() {
            return Err(RecordError::UnknownKind(kind.code()));
        }
        let role = d.kstring()?;
        let member = d.kstring()?;
        d.finish()?;
        check_role(&role).map_err(|cause| RecordError::MalformedIdentity { part, cause })?;
        if kind == RecordKind::LEASE {
            if !member.is_empty() {
                return Err(RecordError::LeaseKeyMember(member));
            }
        } else {
            check_member(&member)
                .map_err(|cause| RecordError::MalformedIdentity { part, cause })?;
        }
        Ok(CoordinationKey { kind, role, member })
    }
}

/// A member's registration: its place in the succession is its record's offset.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RegistrationValue {
    member: String,
    registered_at: i64,
}

impl RegistrationValue {
    /// `registered_at` is epoch milliseconds.
    pub fn new(member: impl Into<String>, registered_at: i64) -> Result<Self, IdentityError> {
        let member = member.into();
        check_member(&member)?;
        Ok(RegistrationValue {
            member,
            registered_at,
        })
    }

    pub fn member(&self) -> &str {
        &self.member
    }

    pub fn registered_at(&self) -> i64 {
        self.registered_at
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(12 + self.member.len());
        out.extend_from_slice(&RECORD_VERSION.to_be_bytes());
        put_kstring(&mut out, &self.member);
        out.extend_from_slice(&self.registered_at.to_be_bytes());
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, RecordError> {
        let part = RecordPart::RegistrationValue;
        let mut d = Decoder::new(bytes, part);
        d.version()?;
        let member = d.kstring()?;
        let registered_at = d.i64()?;
        d.finish()?;
        check_member(&member).map_err(|cause| RecordError::MalformedIdentity { part, cause })?;
        Ok(RegistrationValue {
            member,
            registered_at,
        })
    }
}

/// The role's lease: who holds it, under which token, and its term (epoch ms).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LeaseValue {
    member: String,
    token: FencingToken,
    term: LeaseTerm,
}

impl LeaseValue {
    pub fn new(
        member: impl Into<String>,
        token: FencingToken,
        term: LeaseTerm,
    ) -> Result<Self, IdentityError> {
        let member = member.into();
        check_member(&member)?;
        Ok(LeaseValue {
            member,
            token,
            term,
        })
    }

    pub fn member(&self) -> &str {
        &self.member
    }

    pub fn token(&self) -> FencingToken {
        self.token
    }

    pub fn term(&self) -> LeaseTerm {
        self.term
    }

    pub fn granted_at(&self) -> i64 {
        self.term.granted_at
    }

    pub fn deadline(&self) -> i64 {
        self.term.deadline
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(30 + self.member.len());
        out.extend_from_slice(&RECORD_VERSION.to_be_bytes());
        put_kstring(&mut out, &self.member);
        out.extend_from_slice(&self.token.producer_id().to_be_bytes());
        out.extend_from_slice(&self.token.producer_epoch().to_be_bytes());
        out.extend_from_slice(&self.term.granted_at.to_be_bytes());
        out.extend_from_slice(&self.term.deadline.to_be_bytes());
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, RecordError> {
        let part = RecordPart::LeaseValue;
        let mut d = Decoder::new(bytes, part);
        d.version()?;
        let member = d.kstring()?;
        let producer_id = d.i64()?;
        let producer_epoch = d.i16()?;
        let granted_at = d.i64()?;
        let deadline = d.i64()?;
        d.finish()?;
        check_member(&member).map_err(|cause| RecordError::MalformedIdentity { part, cause })?;
        let token = FencingToken::new(producer_id, producer_epoch)
            .map_err(|cause| RecordError::MalformedToken { part, cause })?;
        Ok(LeaseValue {
            member,
            token,
            term: LeaseTerm {
                granted_at,
                deadline,
            },
        })
    }
}

/// Appends a kstring. Callers pass validated ids (≤ 249 bytes), far below the
/// i16 limit of the format.
fn put_kstring(out: &mut Vec<u8>, s: &str) {
    debug_assert!(s.len() <= i16::MAX as usize);
    out.extend_from_slice(&(s.len() as i16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// The strict reader of one record part, mapping every failure to its frozen error.
struct Decoder<'a> {
    reader: Reader<'a>,
    part: RecordPart,
}

impl<'a> Decoder<'a> {
    fn new(bytes: &'a [u8], part: RecordPart) -> Self {
        Decoder {
            reader: Reader::new(bytes),
            part,
        }
    }

    fn truncated(&self) -> RecordError {
        RecordError::Truncated(self.part)
    }

    fn i16(&mut self) -> Result<i16, RecordError> {
        self.reader.i16().ok_or_else(|| self.truncated())
    }

    fn i64(&mut self) -> Result<i64, RecordError> {
        self.reader.i64().ok_or_else(|| self.truncated())
    }

    fn version(&mut self) -> Result<(), RecordError> {
        match self.i16()? {
            RECORD_VERSION => Ok(()),
            version => Err(RecordError::UnsupportedVersion {
                part: self.part,
                version,
            }),
        }
    }

    fn kstring(&mut self) -> Result<String, RecordError> {
        let length = self.i16()?;
        if length < 0 {
            return Err(RecordError::NegativeLength {
                part: self.part,
                length,
            });
        }
        let bytes = self
            .reader
            .take(length as usize)
            .ok_or_else(|| self.truncated())?;
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|_| RecordError::NonUtf8(self.part))
    }

    fn finish(&self) -> Result<(), RecordError> {
        if self.reader.is_empty() {
            Ok(())
        } else {
            Err(RecordError::TrailingBytes(self.part))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLE: &str = "controller";
    const MEMBER: &str = "node-1";

    fn golden_records() -> Vec<Vec<u8>> {
        let token = FencingToken::new(4242, 7).unwrap();
        let term = LeaseTerm {
            granted_at: 1_700_000_000_000,
            deadline: 1_700_000_030_000,
        };
        vec![
            CoordinationKey::registration(ROLE, MEMBER)
                .unwrap()
                .encode(),
            CoordinationKey::lease(ROLE).unwrap().encode(),
            RegistrationValue::new(MEMBER, 1_700_000_000_000)
                .unwrap()
                .encode(),
            LeaseValue::new(MEMBER, token, term).unwrap().encode(),
        ]
    }

    fn decode_all(bytes: &[u8]) -> [bool; 3] {
        [
            CoordinationKey::decode(bytes).is_ok(),
            RegistrationValue::decode(bytes).is_ok(),
            LeaseValue::decode(bytes).is_ok(),
        ]
    }

    #[test]
    fn every_proper_prefix_of_a_golden_record_is_rejected_by_its_decoder() {
        let golden = golden_records();
        for (index, record) in golden.iter().enumerate() {
            for len in 0..record.len() {
                let accepted = decode_all(&record[..len]);
                let own = if index < 2 { 0 } else { index - 1 };
                assert!(!accepted[own], "record {index} prefix {len} accepted");
            }
            assert!(decode_all(record)[if index < 2 { 0 } else { index - 1 }]);
        }
    }

    #[test]
    fn every_proper_prefix_of_the_golden_key_is_rejected_by_all_decoders() {
        let key = &golden_records()[0];
        for len in 0..key.len() {
            assert_eq!(decode_all(&key[..len]), [false; 3], "prefix {len}");
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic_a_decoder() {
        // xorshift64: deterministic pseudo-random inputs, plus mutations of the golden records.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let golden = golden_records();
        for _ in 0..20_000 {
            let pick = (next() % 5) as usize;
            let mut bytes = if pick < 4 {
                golden[pick].clone()
            } else {
                vec![0; (next() % 40) as usize]
            };
            for _ in 0..(next() % 4) {
                if bytes.is_empty() {
                    break;
                }
                let at = (next() % bytes.len() as u64) as usize;
                bytes[at] = next() as u8;
            }
            let _ = decode_all(&bytes);
        }
    }

    #[test]
    fn kind_is_checked_before_the_strings() {
        // kind 2 followed by a negative string length: the kind error wins.
        let err = CoordinationKey::decode(&[0, 0, 0, 2, 0xff, 0xff]).unwrap_err();
        assert_eq!(err, RecordError::UnknownKind(2));
        assert_eq!(err.part(), RecordPart::Key);
    }

    #[test]
    fn trailing_bytes_are_reported_before_the_role_check() {
        let err = CoordinationKey::decode(&[0, 0, 0, 1, 0, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(err.to_string(), "trailing bytes in coordination state key");
    }

    #[test]
    fn a_member_of_250_bytes_is_rejected_on_encode_and_decode() {
        let long = "m".repeat(250);
        assert_eq!(
            CoordinationKey::registration(ROLE, long.as_str()).unwrap_err(),
            IdentityError::MemberTooLong(250)
        );
        let mut bytes = vec![0, 0, 0, 0, 0, 1, b'r', 0, 250];
        bytes.extend_from_slice(long.as_bytes());
        assert_eq!(
            CoordinationKey::decode(&bytes).unwrap_err().to_string(),
            "malformed coordination state key: a coordination member id of 250 bytes is longer than the 249-byte maximum"
        );
        assert!(CoordinationKey::registration(ROLE, "m".repeat(249)).is_ok());
    }

    #[test]
    fn a_role_of_250_bytes_is_rejected() {
        assert_eq!(
            CoordinationKey::lease("r".repeat(250))
                .unwrap_err()
                .to_string(),
            "a coordination role of 250 bytes is longer than the 249-byte maximum"
        );
    }

    #[test]
    fn registration_key_needs_a_member() {
        assert_eq!(
            CoordinationKey::registration(ROLE, "").unwrap_err(),
            IdentityError::EmptyMember
        );
        let err = CoordinationKey::decode(&[0, 0, 0, 0, 0, 1, b'r', 0, 0]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed coordination state key: a coordination member id must not be empty"
        );
    }

    #[test]
    fn empty_member_in_a_registration_value_is_malformed() {
        let err = RegistrationValue::decode(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed coordination state registration value: a coordination member id must not be empty"
        );
    }

    #[test]
    fn a_negative_epoch_in_a_lease_value_is_malformed() {
        let mut bytes = golden_records()[3].clone();
        bytes[18] = 0xff; // high byte of the producer epoch
        let err = LeaseValue::decode(&bytes).unwrap_err();
        assert_eq!(err.part(), RecordPart::LeaseValue);
        assert!(
            err.to_string()
                .starts_with("malformed coordination state lease value: a fencing token must not be negative, got 4242:-"),
            "{err}"
        );
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn record_kind_displays_known_and_unknown_codes() {
        assert_eq!(RecordKind::REGISTRATION.to_string(), "registration");
        assert_eq!(RecordKind::LEASE.to_string(), "lease");
        assert_eq!(RecordKind::from_code(7).to_string(), "RecordKind(7)");
        assert_eq!(RecordKind::from_code(-1).to_string(), "RecordKind(-1)");
    }

    #[test]
    fn absent_and_empty_values_are_tombstones() {
        assert!(is_tombstone(None));
        assert!(is_tombstone(Some(&[])));
        assert!(!is_tombstone(Some(&[0])));
    }

    #[test]
    fn non_ascii_ids_count_utf8_bytes() {
        // 125 two-byte characters = 250 bytes.
        let role = "ö".repeat(125);
        assert_eq!(
            CoordinationKey::lease(role).unwrap_err(),
            IdentityError::RoleTooLong(250)
        );
    }
}
