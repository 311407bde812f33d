//! Kafka client settings: Java-style `--command-config` keys translated to
//! librdkafka, layered with `-X` overrides and flags, secrets redacted in `Debug`.
//!
//! Precedence (cli-conventions §B): flags > `-X` > env > `--command-config` > defaults.

use std::collections::BTreeMap;
use std::fmt;

use rdkafka::ClientConfig;

/// Keys whose values are secrets: never printed, never logged.
pub fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "password",
        "secret",
        "jaas",
        "token",
        "key.pem",
        "credentials",
    ]
    .iter()
    .any(|s| k.contains(s))
}

/// Fetch sizes of consumers that read a topic as fast as they can (`tail`, the
/// group runner), pinned so a librdkafka upgrade cannot shrink them: 50 MiB per
/// fetch and a 64 MiB prefetch queue (librdkafka 2.12's defaults), so the queue
/// does not run dry between polls. `-X` values win.
pub const STREAMING_FETCH: &[(&str, &str)] = &[
    ("fetch.max.bytes", "52428800"),
    ("queued.max.messages.kbytes", "65536"),
];

/// The `client.id` a command's clients send: the tool, its version and the command, so a
/// broker's logs and quotas tell the commands apart.
pub fn command_client_id(command: &str) -> String {
    format!("krabka-streams/{} {command}", env!("CARGO_PKG_VERSION"))
}

/// librdkafka properties, ordered, with secrets hidden from `Debug`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct KafkaSettings {
    props: BTreeMap<String, String>,
}

impl fmt::Debug for KafkaSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut m = f.debug_map();
        for (k, v) in &self.props {
            if is_secret_key(k) {
                m.entry(k, &"***");
            } else {
                m.entry(k, v);
            }
        }
        m.finish()
    }
}

impl KafkaSettings {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.props.insert(key.into(), value.into());
        self
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.props.get(key).map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.props.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Layers `other` over `self` (other wins).
    pub fn overlay(&mut self, other: &KafkaSettings) {
        for (k, v) in &other.props {
            self.props.insert(k.clone(), v.clone());
        }
    }

    /// Fails fast (exit 4) when every bootstrap address refuses connections
    /// (`reachability`); called before a command's first client is created.
    pub fn refuse_dead_bootstrap(&self) -> Result<(), crate::io::kafka::error::KafkaIoError> {
        match self.get("bootstrap.servers") {
            Some(b) => crate::io::kafka::reachability::refuse_dead_bootstrap(b),
            None => Ok(()),
        }
    }

    /// An rdkafka client configuration with these properties.
    pub fn client_config(&self) -> ClientConfig {
        crate::io::remote_contact::note();
        // So that a refused login can later be reported naming its mechanism and user.
        crate::io::kafka::auth_failure::expect_login(
            self.get("security.protocol"),
            self.get("sasl.mechanism").or(self.get("sasl.mechanisms")),
            self.get("sasl.username"),
        );
        let mut c = ClientConfig::new();
        // KIP-714 client metrics: a command-line tool does not push telemetry to the
        // user's broker unless told to (`-X enable.metrics.push=true`); the
        // subscription request is also a round trip before a short command's work.
        c.set("enable.metrics.push", "false");
        for (k, v) in &self.props {
            c.set(k, v);
        }
        c
    }

    /// An rdkafka consumer configuration with these properties and the fetch
    /// sizes of a streaming consumer (see [`STREAMING_FETCH`]); `-X` values win.
    pub fn streaming_consumer_config(&self) -> ClientConfig {
        let mut c = self.client_config();
        for (key, value) in STREAMING_FETCH {
            if self.get(key).is_none() {
                c.set(*key, *value);
            }
        }
        c
    }

    /// Translates Java client properties (`--command-config`) to librdkafka properties.
    pub fn from_java_properties(java: &BTreeMap<String, String>) -> Result<Self, String> {
        let mut out = KafkaSettings::new();
        for (key, value) in java {
            translate_one(key, value, &mut out)?;
        }
        Ok(out)
    }

    /// Parses `-X key=value` overrides (librdkafka names, passed through).
    pub fn from_overrides(pairs: &[String]) -> Result<Self, String> {
        let mut out = KafkaSettings::new();
        for pair in pairs {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| format!("-X expects key=value, got {pair:?}"))?;
            let k = k.trim();
            if k.is_empty() {
                return Err(format!("-X expects key=value, got {pair:?}"));
            }
            out.set(k, v);
        }
        Ok(out)
    }
}

fn require_pem(key: &str, value: &str) -> Result<(), String> {
    if value.eq_ignore_ascii_case("PEM") {
        Ok(())
    } else {
        Err(format!(
            "{key}={value} is not supported: only PEM stores are (set {key}=PEM and point the location at a PEM file)"
        ))
    }
}

fn translate_one(key: &str, value: &str, out: &mut KafkaSettings) -> Result<(), String> {
    match key {
        "security.protocol" => {
            let v = value.to_ascii_uppercase();
            match v.as_str() {
                "PLAINTEXT" | "SSL" | "SASL_PLAINTEXT" | "SASL_SSL" => {
                    out.set("security.protocol", v.to_ascii_lowercase());
                }
                _ => {
                    return Err(format!(
                        "security.protocol={value} is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"
                    ));
                }
            }
        }
        "ssl.truststore.location" => {
            out.set("ssl.ca.location", value);
        }
        "ssl.keystore.location" => {
            out.set("ssl.certificate.location", value);
        }
        "ssl.key.location" => {
            out.set("ssl.key.location", value);
        }
        "ssl.key.password" | "ssl.keystore.password" => {
            out.set("ssl.key.password", value);
        }
        "ssl.truststore.type" | "ssl.keystore.type" => require_pem(key, value)?,
        "ssl.truststore.password" => {}
        "ssl.endpoint.identification.algorithm" => {
            let v = if value.is_empty() { "none" } else { value };
            out.set("ssl.endpoint.identification.algorithm", v);
        }
        "ssl.server.name" => {
            // librdkafka verifies the broker host name itself; an explicit name only
            // matters when it differs, which librdkafka cannot express.
            tracing::warn!("ssl.server.name is not supported by the Kafka client and is ignored");
        }
        "sasl.mechanism" => {
            let v = value.to_ascii_uppercase();
            match v.as_str() {
                "PLAIN" | "SCRAM-SHA-256" | "SCRAM-SHA-512" | "GSSAPI" | "OAUTHBEARER" => {
                    out.set("sasl.mechanisms", v);
                }
                _ => {
                    return Err(format!(
                        "sasl.mechanism={value} is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, GSSAPI, OAUTHBEARER"
                    ));
                }
            }
        }
        "sasl.jaas.config" => {
            for (k, v) in parse_jaas_options(value) {
                match k.as_str() {
                    "username" => {
                        out.set("sasl.username", v);
                    }
                    "password" => {
                        out.set("sasl.password", v);
                    }
                    "keyTab" => {
                        out.set("sasl.kerberos.keytab", v);
                    }
                    "principal" => {
                        out.set("sasl.kerberos.principal", v);
                    }
                    _ => {}
                }
            }
        }
        "sasl.kerberos.service.name" => {
            out.set("sasl.kerberos.service.name", value);
        }
        "sasl.kerberos.kdc" | "sasl.kerberos.service.host" => {
            tracing::warn!(
                "{key} is taken from the Kerberos configuration (krb5.conf) by the Kafka client and is ignored here"
            );
        }
        "sasl.oauthbearer.token.file" => {
            return Err(
                "sasl.oauthbearer.token.file is not supported yet: use -X sasl.oauthbearer.config=… (librdkafka unsecured JWT) instead"
                    .into(),
            );
        }
        "bootstrap.servers" | "client.id" | "request.timeout.ms" => {
            out.set(key, value);
        }
        // Everything else is handed to librdkafka as is; it rejects unknown names with a clear error.
        _ => {
            out.set(key, value);
        }
    }
    Ok(())
}

/// Extracts `name="value"` / `name=value` options from a JAAS config line.
fn parse_jaas_options(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '=' {
            let mut start = i;
            while start > 0
                && (chars[start - 1].is_alphanumeric()
                    || chars[start - 1] == '_'
                    || chars[start - 1] == '.')
            {
                start -= 1;
            }
            let name: String = chars[start..i].iter().collect();
            i += 1;
            let mut value = String::new();
            if i < chars.len() && chars[i] == '"' {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                    }
                    value.push(chars[i]);
                    i += 1;
                }
                i += 1;
            } else {
                while i < chars.len() && !chars[i].is_whitespace() && chars[i] != ';' {
                    value.push(chars[i]);
                    i += 1;
                }
            }
            if !name.is_empty() {
                out.push((name, value));
            }
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn java(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn sasl_ssl_properties_translate_to_librdkafka_names() {
        let s = KafkaSettings::from_java_properties(&java(&[
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "SCRAM-SHA-512"),
            (
                "sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"s3cr\\\"et\";",
            ),
            ("ssl.truststore.location", "/etc/ca.pem"),
            ("ssl.truststore.type", "PEM"),
            ("ssl.keystore.location", "/etc/client.pem"),
            ("ssl.key.location", "/etc/client.key"),
            ("client.id", "me"),
        ]))
        .unwrap();
        assert_eq!(s.get("security.protocol"), Some("sasl_ssl"));
        assert_eq!(s.get("sasl.mechanisms"), Some("SCRAM-SHA-512"));
        assert_eq!(s.get("sasl.username"), Some("alice"));
        assert_eq!(s.get("sasl.password"), Some("s3cr\"et"));
        assert_eq!(s.get("ssl.ca.location"), Some("/etc/ca.pem"));
        assert_eq!(s.get("ssl.certificate.location"), Some("/etc/client.pem"));
        assert_eq!(s.get("ssl.key.location"), Some("/etc/client.key"));
        assert_eq!(s.get("client.id"), Some("me"));
    }

    #[test]
    fn secrets_never_appear_in_debug_output() {
        let mut s = KafkaSettings::new();
        s.set("sasl.password", "hunter2")
            .set("ssl.key.password", "pw2")
            .set("client.id", "c");
        let text = format!("{s:?}");
        assert!(!text.contains("hunter2") && !text.contains("pw2"), "{text}");
        assert!(text.contains("client.id"));
    }

    #[test]
    fn non_pem_stores_and_unknown_protocols_are_rejected() {
        assert!(
            KafkaSettings::from_java_properties(&java(&[("ssl.truststore.type", "JKS")]))
                .unwrap_err()
                .contains("only PEM")
        );
        assert!(
            KafkaSettings::from_java_properties(&java(&[("security.protocol", "TLS")])).is_err()
        );
        assert!(KafkaSettings::from_java_properties(&java(&[("sasl.mechanism", "MD5")])).is_err());
    }

    #[test]
    fn overrides_need_key_equals_value() {
        let s = KafkaSettings::from_overrides(&["fetch.wait.max.ms=10".into(), "a=b=c".into()])
            .unwrap();
        assert_eq!(s.get("fetch.wait.max.ms"), Some("10"));
        assert_eq!(s.get("a"), Some("b=c"));
        assert!(KafkaSettings::from_overrides(&["novalue".into()]).is_err());
        assert!(KafkaSettings::from_overrides(&["=x".into()]).is_err());
    }
}
