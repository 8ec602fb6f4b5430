//! hrns-blocking: the blocking driver of hrns (placeholder docs, rewritten below).
#[cfg(feature = "mock")]
pub mod mock;
pub mod tool;
pub mod tools;
