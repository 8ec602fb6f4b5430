//! hrns-tokio (skeleton).
