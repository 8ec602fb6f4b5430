//! hrns-core (work in progress skeleton).
pub mod sse;
