//! simrob-ros2's tests: the messages' CDR layout, the bridge's logic and the environment
//! rules, all sans IO, and a participant under forged peers (on the loopback interface and
//! from a network namespace of the test's own). (The participant is tested against Cyclone
//! DDS by `tests/cyclone`, run from `.ci/ros2.sh`.)

mod bridge;
mod cdr;
mod env;
mod flood;
