//! The integration tests of this crate, in one test binary (one link instead of one per file).

mod decode_errors;
mod numbers;
mod roundtrip;
mod seed000;
