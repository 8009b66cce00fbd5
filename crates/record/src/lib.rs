//! # simrob-record
//!
//! The recording formats, each with its writer, its one reader and its one validation side
//! by side (see DESIGN.md, "One owner per format"):
//!
//! * [`simrec`]: `simrob-recording`, the 3D recording — version 2 (compact blocks: the
//!   [`simrec::Writer`] and [`simrec::decode_block`]) and version 1 (JSON lines,
//!   [`simrec::parse_line`]), both of [`frame::Frame`]s; the viewer's shell indexes a file
//!   (also one being written) with them.
//! * [`swarm`]: `simrob-swarm-recording` version 1, the JSON lines `simrob swarm run
//!   --record` writes (the swarm's Seer hands its snapshots to [`swarm::Writer`]); read by
//!   the 2D and the 3D replay alike through [`swarm::Reader`].
//!
//! The crate does no I/O of its own: writers take any [`std::io::Write`], readers any
//! [`std::io::Read`] + [`std::io::Seek`] (the shell opens the file). No threads, no clocks.

#![deny(missing_docs)]

pub mod frame;
pub mod simrec;
pub mod swarm;
