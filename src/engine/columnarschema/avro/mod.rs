//! Avro ↔ Arrow: the schema tree, the type mapping of semantics §3, the hand-written
//! binary decoder into Arrow builders, and the registry-framed value codec.

pub mod codec;
pub mod cursor;
pub mod decoder;
pub mod json_text;
pub mod schema;

#[cfg(test)]
mod tests;
