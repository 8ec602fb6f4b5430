//! The roots offered to servers (`roots/list`): where they may work.

/// A root the server may work in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// A `file://` URI (see [`file_uri`]).
    pub uri: String,
    /// A name for people.
    pub name: Option<String>,
}

/// The `file://` URI of an absolute path, with every byte outside the unreserved set and `/`
/// percent-encoded.
pub fn file_uri(path: &str) -> String {
    let mut uri = String::from("file://");
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}
