//! Runs a scenario file and prints its log and summary (a minimal shell around the crate;
//! the full one is `simrob swarm run`).
//!
//! `cargo run -p simrob-swarm --example run_scenario -- scenarios/swarm/hospital.toml [ROBOTS]`

use std::path::Path;

use simrob_swarm::scenario::{Overrides, Scenario};
use simrob_swarm::seer::{Consumer, ConsumerError, Header, Seer, Snapshot};
use simrob_swarm::sim::LogLine;

struct PrintLog;

impl Consumer for PrintLog {
    fn header(&mut self, _: &Header) -> Result<(), ConsumerError> {
        Ok(())
    }
    fn snapshot(&mut self, _: &Snapshot) -> Result<(), ConsumerError> {
        Ok(())
    }
    fn log(&mut self, l: &LogLine) -> Result<(), ConsumerError> {
        println!("{:8.2}  {}", l.t, l.text);
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: run_scenario SCENARIO [ROBOTS]")?;
    let robots = std::env::args().nth(2).map(|s| s.parse()).transpose()?;
    let scenario = Scenario::load(Path::new(&path))?;
    let mut sim = scenario.build(&Overrides {
        robots,
        ..Overrides::default()
    })?;
    sim.add_system(Box::new(Seer::new("log", 1.0, vec![Box::new(PrintLog)])));
    while sim.step() {}
    println!("{:#?}", sim.finish(0.0));
    Ok(())
}
