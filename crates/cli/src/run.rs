//! `simrob run`: a scenario headless.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use simrob_protocol::tree::parse_finite_f64;
use simrob_protocol::{
    decode_datagram, CommandKeys, ControlRequest, EntityId, EntityRequest, EntitySpec,
    MotorCommand, Request,
};
use simrob_session::Limits;
use simrob_world::World;

/// The scenario `simrob run` runs when given none: scenarios/soccer.xml (materials, field,
/// SumBot and ball, self-contained), built in so that `simrob run` works from any directory.
const BUILT_IN_SCENARIO: &str = include_str!("../../../scenarios/soccer.xml");

/// How the built-in scenario is named in what `simrob run` prints.
const BUILT_IN_NAME: &str = "scenarios/soccer.xml (built in)";

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("scenario_given").args(["scenario", "scenario_flag"]).required(false)))]
pub struct RunArgs {
    /// Scenario file (SimRob XML messages), or give it as `--scenario FILE` [default: the
    /// built-in soccer scenario, as scenarios/soccer.xml].
    #[arg(value_name = "SCENARIO")]
    pub scenario: Option<PathBuf>,
    /// The scenario file, as a flag (the same as SCENARIO).
    #[arg(long = "scenario", value_name = "FILE")]
    pub scenario_flag: Option<PathBuf>,
    /// Iterations to run.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    iterations: u64,
    /// Print the poses every N iterations (0 = only at the end).
    #[arg(long, value_name = "N", default_value_t = 100)]
    every: u64,
    /// Wheel speeds to set on a robot before running: ENTITY:JOINT=RAD_S[,JOINT=RAD_S…],
    /// e.g. `--motors 3:0=3,1=3` (each joint once, each speed a finite number). May be
    /// repeated.
    #[arg(long = "motors", value_name = "SPEC", value_parser = parse_motors)]
    motors: Vec<Motors>,
    /// Timestep in seconds (or 50ms, 2s, 1min; default: the scenario's, else 0.01).
    #[arg(long, value_name = "S", value_parser = crate::flags::seconds)]
    timestep: Option<f64>,
    /// A server configuration file, as `simrob serve --config` takes: its world defaults
    /// (`defaultstepsize`, `defaultgravity`, …) and its limits (`maxvelocity`,
    /// `maxposition`, `maxentities`, …) apply. Without it, the server's defaults do: the
    /// scenario and `--motors` are held to the same limits as on `simrob serve`.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Threads each physics step runs on (configuration key `physicsthreads`, default 1); the
    /// run is the same at any number; 1 to 256. Above 1 needs a simrob built with parallel
    /// physics: `cargo build --release -p simrob --features parallel`.
    #[arg(long, value_name = "N", value_parser = crate::flags::physics_threads)]
    physics_threads: Option<usize>,
    /// The largest scenario file read, `--max-scenario-bytes BYTES`.
    #[command(flatten)]
    scenario_bytes: crate::flags::ScenarioBytes,
    /// Print only a JSON summary at the end (for `simrob batch`): scenario, iterations,
    /// simulated and wall seconds, and each robot's and ball's final pose under
    /// `entities.ID` (`x`, `y`, `z` in m; `roll`, `pitch`, `yaw` in rad).
    #[arg(long)]
    json: bool,
}

/// Reads and decodes every request of a scenario file (SimRob XML messages) of at most
/// `max` bytes (`maxscenariobytes`, `--max-scenario-bytes`).
pub fn read_requests(path: &Path, max: u64) -> Result<Vec<Request>> {
    if let Some(ext @ ("toml" | "json")) = path.extension().and_then(|e| e.to_str()) {
        bail!(
            "{} is a swarm scenario ({ext}), not SimRob XML: run it with `simrob swarm run {}`",
            path.display(),
            path.display()
        );
    }
    let bytes = read_scenario(path, max)?;
    decode_requests(&bytes, &path.display().to_string())
}

/// The bytes of the scenario file at `path`, a regular file of at most `max` bytes; a larger
/// one is an error naming the file, its size, the limit and how to raise it.
pub fn read_scenario(path: &Path, max: u64) -> Result<Vec<u8>> {
    simrob_files::read_bounded(path, max).map_err(|e| {
        anyhow::anyhow!(e.message(
            &format!("scenario {}", path.display()),
            crate::flags::RAISE_SCENARIO_BYTES_OR_KEY
        ))
    })
}

/// Decodes every request of a scenario's text (SimRob XML messages); `origin` names it in
/// errors.
fn decode_requests(bytes: &[u8], origin: &str) -> Result<Vec<Request>> {
    decode_datagram(bytes, &CommandKeys::default())
        .into_iter()
        .enumerate()
        .map(|(n, r)| r.with_context(|| format!("{origin}: request {}", n + 1)))
        .collect()
}

/// Applies every request of a scenario file to `world` as a server would, each held to
/// `limits` first (a value out of range, too many entities or bodies: an error, and the
/// request does not run); Save/Load name plain files in the scenario's folder
/// ([`simrob_server::local`]).
pub fn load_scenario(world: &mut World, path: &Path, limits: &Limits) -> Result<()> {
    let requests = read_requests(path, limits.max_scenario_bytes)?;
    let folder = path.parent().unwrap_or(Path::new("."));
    simrob_server::local::apply_requests(world, limits, &requests, folder, "the scenario's folder")
        .with_context(|| path.display().to_string())?;
    Ok(())
}

/// One `--motors` value: its text (for messages) and the motor command it stands for.
#[derive(Clone)]
struct Motors {
    text: String,
    request: EntityRequest,
}

/// Reads `--motors ENTITY:JOINT=RAD_S[,JOINT=RAD_S…]`, refusing what the SimRob protocol
/// refuses in a `Robot_Motor_Control`: a speed that is not a finite number, a joint given
/// twice.
fn parse_motors(spec: &str) -> Result<Motors, String> {
    let Some((entity, rest)) = spec.split_once(':') else {
        return Err("expected ENTITY:JOINT=RAD_S[,JOINT=RAD_S…], e.g. 3:0=3,1=3".into());
    };
    let entity_id: u32 = entity
        .trim()
        .parse()
        .map_err(|_| format!("{entity:?} is not an entity id"))?;
    let mut motors: Vec<MotorCommand> = Vec::new();
    for pair in rest.split(',') {
        let Some((joint, value)) = pair.split_once('=') else {
            return Err(format!("{pair:?} is not JOINT=RAD_S"));
        };
        let wheel_joint_id: u32 = joint
            .trim()
            .parse()
            .map_err(|_| format!("{joint:?} is not a joint id"))?;
        let value = parse_finite_f64(value).map_err(|e| format!("joint {wheel_joint_id}: {e}"))?;
        if motors.iter().any(|m| m.wheel_joint_id == wheel_joint_id) {
            return Err(format!(
                "joint {wheel_joint_id} is given twice (one speed a joint)"
            ));
        }
        motors.push(MotorCommand {
            wheel_joint_id,
            value,
        });
    }
    Ok(Motors {
        text: spec.to_string(),
        request: EntityRequest::RobotMotorControl {
            entity_id: EntityId(entity_id),
            motors,
        },
    })
}

/// `v` as a JSON number written as simrob writes every number (`simrob_protocol::real`: an
/// engine's `f32` value as the shortest text that reads back to it, 1.2 and not
/// 1.2000000476837158); null if not finite.
fn json_real(v: f64) -> serde_json::Value {
    simrob_protocol::real(v)
        .to_string()
        .parse::<f64>()
        .map_or(serde_json::Value::Null, serde_json::Value::from)
}

/// The iteration, its simulated time and every entity's pose but the fields'.
fn print_poses(out: &mut impl Write, world: &World) -> std::io::Result<()> {
    writeln!(
        out,
        "iteration {} (t = {:.2} s)",
        world.iteration(),
        world.sim_time()
    )?;
    for id in world.entity_ids() {
        let Some(spec) = world.entity_spec(id) else {
            continue;
        };
        if matches!(spec, EntitySpec::Field { .. }) {
            continue;
        }
        if let Some((p, r)) = world.entity_pose(id) {
            writeln!(
                out,
                "  {:<5} {:>3}  pos ({:>8.4}, {:>8.4}, {:>8.4})  rot ({:>7.4}, {:>7.4}, {:>7.4})",
                spec.type_name(),
                id,
                p[0],
                p[1],
                p[2],
                r[0],
                r[1],
                r[2]
            )?;
        }
    }
    Ok(())
}

pub fn run(args: RunArgs) -> Result<()> {
    let mut out = std::io::stdout().lock();
    crate::shell::ignore_broken_pipe(simulate(args, &mut out))
}

fn simulate(args: RunArgs, json_out: &mut impl Write) -> Result<()> {
    // With --json the running text goes nowhere and one JSON object is printed at the end.
    let mut sink = std::io::sink();
    let mut out: &mut dyn Write = if args.json { &mut sink } else { &mut *json_out };
    let scenario = args.scenario.clone().or_else(|| args.scenario_flag.clone());
    let mut config = crate::shell::read_config(args.config.as_deref())?;
    crate::shell::physics_threads(&mut config, args.physics_threads)?;
    args.scenario_bytes.apply(&mut config)?;
    let limits = &config.limits;
    let mut world = World::new(config.world.clone());
    world
        .set_physics_threads(config.physics_threads)
        .map_err(|e| anyhow::anyhow!("physicsthreads {}: {e}", config.physics_threads))?;
    match &scenario {
        Some(path) => load_scenario(&mut world, path, limits)?,
        None => {
            // Self-contained: no Save or Load, so no folder is ever read.
            let requests = decode_requests(BUILT_IN_SCENARIO.as_bytes(), BUILT_IN_NAME)?;
            simrob_server::local::apply_requests(
                &mut world,
                limits,
                &requests,
                Path::new("."),
                "the current directory",
            )
            .context(BUILT_IN_NAME)?;
        }
    }
    let scenario = scenario.map_or_else(|| BUILT_IN_NAME.to_string(), |p| p.display().to_string());
    if let Some(t) = args.timestep {
        // The same range the server enforces (`mintimestep`, `maxtimestep`).
        if !(limits.min_timestep..=limits.max_timestep).contains(&t) {
            bail!(
                "--timestep {}: a timestep is from {} to {} s (the server's `mintimestep` and \
                 `maxtimestep`)",
                crate::flags::shown(t),
                limits.min_timestep,
                limits.max_timestep
            );
        }
        world.apply_control(&ControlRequest::SetTimestep(t))?;
    }
    for m in &args.motors {
        let request = Request::Entity {
            request: m.request.clone(),
            response: None,
        };
        let context = || format!("--motors {:?}", m.text);
        limits.check(&request, &world).with_context(context)?;
        world.apply(&request).with_context(context)?;
    }
    if !world.modes().initialized {
        world.apply_control(&ControlRequest::InitializeSimulation)?;
    }
    if world.modes().step_mode {
        world.apply_control(&ControlRequest::SetStepMode(false))?;
    }
    writeln!(
        out,
        "{}: {} entities, timestep {} s",
        scenario,
        world.entity_ids().count(),
        world.params().timestep
    )?;
    // Simulated time as iterations × steps × timestep (fixed while the loop runs), not the
    // world's running sum of timesteps (0.09999999999999999 after 10 steps of 0.01 s).
    let start_time = world.sim_time();
    let step_time = f64::from(world.modes().steps_per_iteration) * world.params().timestep;
    let start = Instant::now();
    for _ in 0..args.iterations {
        world.advance();
        if args.every > 0 && world.iteration() % args.every == 0 {
            print_poses(&mut out, &world)?;
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let simulated = start_time + args.iterations as f64 * step_time;
    if args.every == 0 || world.iteration() % args.every != 0 {
        print_poses(&mut out, &world)?;
    }
    writeln!(
        out,
        "{} iterations in {:.3} s wall ({:.0} iterations/s, {:.0}× real time)",
        args.iterations,
        wall,
        args.iterations as f64 / wall.max(1e-9),
        simulated / wall.max(1e-9)
    )?;
    if args.json {
        let mut entities = serde_json::Map::new();
        for id in world.entity_ids() {
            let (Some(spec), Some((p, r))) = (world.entity_spec(id), world.entity_pose(id)) else {
                continue;
            };
            if matches!(spec, EntitySpec::Field { .. }) {
                continue;
            }
            let [x, y, z, roll, pitch, yaw] = [p[0], p[1], p[2], r[0], r[1], r[2]].map(json_real);
            entities.insert(
                id.to_string(),
                serde_json::json!({"kind": spec.type_name(), "x": x, "y": y, "z": z,
                    "roll": roll, "pitch": pitch, "yaw": yaw}),
            );
        }
        let summary = serde_json::json!({
            "scenario": scenario,
            "iterations": args.iterations,
            "simulated_seconds": simulated,
            "wall_seconds": wall,
            "entities": entities,
        });
        writeln!(json_out, "{summary}")?;
    }
    Ok(())
}

#[cfg(test)]
mod file_tests {
    use super::*;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        run: RunArgs,
    }

    fn soccer() -> String {
        format!("{}/../../scenarios/soccer.xml", env!("CARGO_MANIFEST_DIR"))
    }

    /// The error `run` gives for `args`, with its causes.
    fn run_error(args: &[&str]) -> String {
        match run_with(args) {
            Ok(out) => panic!("{args:?} ran: {out}"),
            Err(e) => format!("{e:#}"),
        }
    }

    fn run_with(args: &[&str]) -> Result<String> {
        use clap::Parser;
        let cli = Cli::try_parse_from(["run"].iter().chain(args))?;
        let mut out = Vec::new();
        simulate(cli.run, &mut out)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    #[test]
    fn json_gives_the_simulated_time_without_float_noise() {
        // 10 steps of 0.01 s summed are 0.09999999999999999.
        for (iterations, seconds) in [("10", 0.1), ("500", 5.0), ("3", 0.03)] {
            let out = run_with(&["--iterations", iterations, "--json"]).expect("runs");
            let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
            assert_eq!(json["simulated_seconds"].as_f64(), Some(seconds), "{out}");
        }
        let out = run_with(&["--iterations", "10", "--timestep", "0.002", "--json"]).unwrap();
        assert!(out.contains("\"simulated_seconds\":0.02,"), "{out}");
    }

    #[test]
    fn without_a_scenario_the_built_in_one_runs_wherever_run_is() {
        // The tests run in crates/cli, where no scenarios/soccer.xml is.
        assert!(!Path::new("scenarios/soccer.xml").exists());
        let out = run_with(&["--iterations", "5", "--every", "0"]).expect("built in");
        assert!(
            out.starts_with("scenarios/soccer.xml (built in): 3 entities"),
            "{out}"
        );
        // The same world as the file's.
        let file = run_with(&["--iterations", "5", "--every", "0", &soccer()]).expect("file");
        let poses = |s: &str| {
            s.lines()
                .filter(|l| l.starts_with("  "))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(poses(&out), poses(&file));
    }

    #[test]
    fn the_scenario_and_motors_are_held_to_the_servers_limits() {
        let scenario = soccer();
        // A wheel target past `maxvelocity` sent the SumBot through the floor (z −73 m
        // after 3 s); the server refuses it, and so does `run`, before anything runs.
        let e = run_error(&["--motors", "3:0=1e308,1=-1e308", "--json", &scenario]);
        assert!(
            e.contains("Value 1e308 is out of range") && e.contains("maxvelocity"),
            "{e}"
        );
        // Within the limit it runs.
        let out = run_with(&[
            "--motors",
            "3:0=3,1=3",
            "--json",
            "--iterations",
            "5",
            &scenario,
        ])
        .expect("runs");
        assert!(out.contains("\"iterations\":5"), "{out}");
        // Poses as the engine's f32 values, at their length: the ball's 1.2, not
        // 1.2000000476837158.
        assert!(out.contains("\"x\":1.2,"), "{out}");
        let poses = &out[out.find("\"entities\"").unwrap()..];
        assert!(
            !poses.contains("0000000") && !poses.contains("9999999"),
            "{out}"
        );
        // A configuration's limits apply, and its world defaults.
        let dir = std::env::temp_dir().join(format!("simrob-run-limits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("server.cfg");
        std::fs::write(&config, "maxvelocity 2\n").unwrap();
        let config = config.to_string_lossy().into_owned();
        let e = run_error(&["--config", &config, "--motors", "3:0=3,1=3", &scenario]);
        assert!(e.contains("at most 2 in size"), "{e}");
        std::fs::write(dir.join("server.cfg"), "maxentities 2\n").unwrap();
        let e = run_error(&["--config", &config, &scenario]);
        assert!(
            e.contains("soccer.xml: request") && e.contains("maxentities"),
            "{e}"
        );
        // A scenario's own request past a limit.
        let bad = dir.join("gravity.xml");
        std::fs::write(
            &bad,
            "<Message><Simulation_Message><Control_Request Command=\"Set_World_Gravity\">\
             <Gravity>-1e300</Gravity></Control_Request></Simulation_Message></Message>",
        )
        .unwrap();
        let e = run_error(&[bad.to_string_lossy().as_ref()]);
        assert!(
            e.contains("gravity.xml: request 1") && e.contains("Gravity -1e300 is out of range"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `--motors` refuses what the XML protocol refuses in a Robot_Motor_Control (one joint
    /// twice, a speed that is not a finite number), as a bad flag value (clap's status 2).
    #[test]
    fn motors_refuses_a_joint_twice_and_a_speed_that_is_not_finite() {
        use clap::Parser;
        for (spec, why) in [
            ("3:0=3,0=5", "joint 0 is given twice"),
            (
                "3:0=NaN",
                "joint 0: expected a finite number (NaN and infinity are not allowed)",
            ),
            ("3:1=inf", "joint 1: expected a finite number"),
            ("3:0=fast", "joint 0: expected a number, found \"fast\""),
        ] {
            let e = match Cli::try_parse_from(["run", "--motors", spec]) {
                Ok(_) => panic!("--motors {spec} parsed"),
                Err(e) => e,
            };
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{spec}");
            assert_eq!(e.exit_code(), 2, "{spec}");
            let text = e.to_string();
            assert!(
                text.contains(why) && text.contains("--motors"),
                "{spec}: {text}"
            );
        }
    }

    /// A scenario `serve` takes but `run` cannot (a session's pacing, agent messages): the
    /// refusal says what to do.
    #[test]
    fn a_session_setting_in_a_scenario_is_refused_with_what_to_do() {
        let dir = std::env::temp_dir().join(format!("simrob-run-session-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (command, body) in [
            (
                "Set_AutoAdjust_Mode",
                "<AutoAdjust_Mode>true</AutoAdjust_Mode>",
            ),
            ("Set_Sync_Mode", "<Sync_Mode>true</Sync_Mode>"),
            ("Set_Sync_Wait", "<Sync_Wait>0.5</Sync_Wait>"),
        ] {
            let scenario = dir.join(format!("{command}.xml"));
            std::fs::write(
                &scenario,
                format!(
                    "<Message><Simulation_Message><Control_Request Command=\"{command}\">{body}\
                     </Control_Request></Simulation_Message></Message>"
                ),
            )
            .unwrap();
            let e = run_error(&[scenario.to_string_lossy().as_ref()]);
            assert!(
                e.contains(&format!("request 1: {command} is a server's setting"))
                    && e.contains(
                        "remove it from the scenario, or give the scenario to `simrob serve`"
                    ),
                "{e}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_scenarios_save_and_load_name_plain_files_in_its_folder() {
        let dir = std::env::temp_dir().join(format!("simrob-run-save-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let inner = dir.join("scenarios");
        std::fs::create_dir_all(&inner).unwrap();
        let save = |file: &str| {
            format!(
                "<Message><Simulation_Message><Control_Request Command=\"Save\">\
                 <File>{file}</File></Control_Request></Simulation_Message></Message>"
            )
        };
        // Out of its folder (a scenario from elsewhere wrote wherever it named, over any
        // file of the user's): refused, nothing written.
        for bad in ["../escape.xml", "/tmp/escape.xml", ".hidden.xml"] {
            let scenario = inner.join("bad.xml");
            std::fs::write(&scenario, save(bad)).unwrap();
            let e = run_error(&[scenario.to_string_lossy().as_ref()]);
            assert!(
                e.contains("request 1") && e.contains("scenario's folder"),
                "{bad}: {e}"
            );
        }
        assert!(!dir.join("escape.xml").exists());
        // A plain name: saved beside the scenario.
        let scenario = inner.join("good.xml");
        std::fs::write(&scenario, save("state.xml")).unwrap();
        run_with(&["--iterations", "1", scenario.to_string_lossy().as_ref()]).expect("runs");
        assert!(inner.join("state.xml").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_scenario_that_is_a_device_a_fifo_or_huge_is_refused_at_once() {
        let e = format!(
            "{:#}",
            read_requests(Path::new("/dev/zero"), 1 << 20).unwrap_err()
        );
        assert!(e.contains("not a regular file"), "{e}");
        let dir = std::env::temp_dir().join(format!("simrob-run-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("scenario.xml");
        if std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success())
        {
            let e = format!("{:#}", read_requests(&fifo, 1 << 20).unwrap_err());
            assert!(e.contains("not a regular file"), "{e}");
        }
        let huge = dir.join("huge.xml");
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(10_000_000_000)
            .unwrap();
        let e = format!("{:#}", read_requests(&huge, 1 << 20).unwrap_err());
        assert!(e.contains("limit"), "{e}");
        let e = format!(
            "{:#}",
            crate::shell::read_file(&huge, simrob_mrs::MAX_MAP_FILE).unwrap_err()
        );
        assert!(e.contains("limit"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
