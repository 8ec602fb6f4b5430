//! hrns-core: the sans-IO heart of hrns. Bytes in, decisions out.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod accumulate;
mod chunk;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod sse;
pub mod stream;
mod text;
pub mod wire;

pub use accumulate::{Accumulator, Choice, Completion, FinishReason};
pub use stream::{ChatStream, StreamError, StreamEvent, StreamFailure};
