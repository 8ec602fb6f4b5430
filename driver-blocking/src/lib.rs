//! hrns-blocking (skeleton).
