//! `schema` use cases and what decoding commands share with them: the registry client
//! ([`connect`]), the schema cache of `tail` and `run` ([`cache`]), local schema files and
//! the prewarm manifest ([`source`]), prewarming subjects and writing the cache
//! file ([`prewarm`]), the local compatibility check ([`check`]), the
//! decoding of one framed value ([`decode`]) and the read-only registry questions of
//! `schema inspect` ([`inspect`]). The rules are `docs/semantics.md` §1–§2 and
//! the framing `docs/formats.md` §2.

pub mod cache;
pub mod check;
pub mod connect;
pub mod decode;
pub mod inspect;
pub mod prewarm;
pub mod source;
