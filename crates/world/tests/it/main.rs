//! The integration tests of this crate, in one test binary (one link instead of one per file).

mod common;

mod behaviour;
mod camera;
mod commands;
mod crowd;
mod humanoid;
mod numbers;
mod rest;
mod save_load;
mod seed_examples;
