//! A JSON document against the shape of a published JSON Schema copied into a test
//! (winget's manifests, DSC's resource manifest): the checks both need.

use serde_json::Value;

/// Every required key present, every key one the schema knows.
pub fn shape(what: &str, v: &Value, required: &[&str], known: &[&str]) {
    let map = v
        .as_object()
        .unwrap_or_else(|| panic!("{what}: not an object"));
    for k in required {
        assert!(map.contains_key(*k), "{what}: required {k} missing");
    }
    for k in map.keys() {
        assert!(
            known.contains(&k.as_str()),
            "{what}: {k} is not in the schema"
        );
    }
}
