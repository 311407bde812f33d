//! The schema cache a decoding command (`tail`, `run`) reads writer schemas from: fetching
//! through a registry client when there is one, seeded from the cache file
//! `schema prewarm --write-cache` wrote (`docs/semantics.md` §2). Without a registry it
//! is offline, and an id the file lacks fails its record.

use std::path::Path;
use std::sync::Arc;

use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::cache_file::CacheFile;
use crate::io::registry_client::HttpRegistry;
use crate::ops::{Error, Result};

/// Reads and checks a cache file. Any problem (unreadable, not UTF-8, truncated, not a
/// cache file, a newer version) is a usage error naming the file: nothing has run yet.
pub fn read_cache_file(path: &Path) -> Result<CacheFile> {
    let shown = path.display();
    let bytes = crate::io::bounded_read::read(path, crate::io::bounded_read::SCHEMA_CACHE)
        .map_err(|e| Error::usage(format!("cannot read schema cache {shown}: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::usage(format!(
            "schema cache {shown}: not UTF-8 at byte {}",
            e.utf8_error().valid_up_to()
        ))
    })?;
    CacheFile::parse(&text, &format!("schema cache {shown}")).map_err(|e| {
        Error::usage(format!(
            "{e}; write it again with `krabka-streams schema prewarm --write-cache {shown}`"
        ))
    })
}

/// The cache a decoding command uses: fetching through `registry` when one is given,
/// seeded from `file` when one is given.
pub fn open_cache(registry: Option<Arc<HttpRegistry>>, file: Option<&Path>) -> Result<SchemaCache> {
    let loaded = file.map(read_cache_file).transpose()?;
    let cache = match registry {
        Some(client) => SchemaCache::new(client),
        None => SchemaCache::offline(),
    };
    if let (Some(loaded), Some(path)) = (&loaded, file) {
        loaded
            .seed(&cache)
            .map_err(|e| Error::usage(format!("schema cache {}: {e}", path.display())))?;
        tracing::debug!(
            "loaded {} subjects and {} writer schemas from {}",
            loaded.subjects.len(),
            loaded.schemas.len(),
            path.display()
        );
    }
    Ok(cache)
}
