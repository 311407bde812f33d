//! Kafka `.properties` files (`--command-config`): Java properties syntax
//! (`#`/`!` comments, `\` continuations, `\uXXXX` escapes) via the `java-properties` crate.

use std::collections::BTreeMap;
use std::path::Path;

/// Reads a Java properties file into an ordered map. Errors name the file and line.
pub fn read_properties_file(path: &Path) -> Result<BTreeMap<String, String>, String> {
    let bytes = crate::io::bounded_read::read(path, crate::io::bounded_read::CONFIG)
        .map_err(|e| format!("cannot read command config {}: {e}", path.display()))?;
    parse_properties(bytes.as_slice())
        .map_err(|e| format!("cannot parse command config {}: {e}", path.display()))
}

/// Parses properties text from any reader.
pub fn parse_properties(reader: impl std::io::Read) -> Result<BTreeMap<String, String>, String> {
    let map = java_properties::read(reader).map_err(|e| match e.line_number() {
        Some(line) => format!("line {line}: {e}"),
        None => e.to_string(),
    })?;
    Ok(map.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_continuations_and_unicode_escapes_are_parsed() {
        let text = "# a comment\n! another\nsecurity.protocol = SASL_SSL\nclient.id: my\\\n    -client\nsasl.jaas.config=org.Plain required username=\"u\" \\\n  password=\"p\\u00e9\";\nempty=\n";
        let map = parse_properties(text.as_bytes()).unwrap();
        assert_eq!(map["security.protocol"], "SASL_SSL");
        assert_eq!(map["client.id"], "my-client");
        assert_eq!(
            map["sasl.jaas.config"],
            "org.Plain required username=\"u\" password=\"p\u{e9}\";"
        );
        assert_eq!(map["empty"], "");
        assert_eq!(map.len(), 4);
    }

    #[test]
    fn a_missing_file_names_the_path() {
        let err = read_properties_file(Path::new("/nonexistent/client.properties")).unwrap_err();
        assert!(err.contains("/nonexistent/client.properties"), "{err}");
    }
}
