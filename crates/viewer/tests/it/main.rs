//! The integration tests of this crate, in one test binary (one link instead of one per file).

mod headless;
mod sumbot;

mod browser;
mod density;
mod guard;
mod replay;
mod view2d;
mod wire;
