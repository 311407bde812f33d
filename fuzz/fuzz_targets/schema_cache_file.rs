//! The schema cache file (`--schema-cache FILE`): parsed, then seeded into a cache,
//! whose writer schemas must then parse or fail cleanly.
#![no_main]
use krabka_streams::engine::schema::cache::SchemaCache;
use krabka_streams::engine::schema::cache_file::CacheFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(file) = CacheFile::parse(text, "fuzz.json") {
        let cache = SchemaCache::offline();
        let _ = file.seed(&cache);
        // What was read writes back as a file that parses again.
        let again = file.to_json();
        assert!(CacheFile::parse(&again, "again.json").is_ok(), "{again}");
    }
});
