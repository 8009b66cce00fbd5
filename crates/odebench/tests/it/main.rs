//! The benchmark's MuJoCo scene is built as its ODE and simrob scenes are: the tool's
//! `--check-mujoco` builds one SumBot and the ball in MuJoCo (and in simrob's default mode)
//! and prints the model's mass and coordinates, where they come to rest and how fast the
//! SumBot drives. Without MuJoCo's library the tool fails, saying so, and the test passes unless
//! `SIMROB_REQUIRE_MUJOCO=1` (CI installs the library, see `.ci/mujoco.sh`).

mod cli;

use std::collections::HashMap;
use std::process::Command;

fn numbers(out: &str) -> HashMap<String, Vec<f64>> {
    out.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let key = w.next()?.to_string();
            let v: Vec<f64> = w.filter_map(|x| x.parse().ok()).collect();
            Some((key, v))
        })
        .collect()
}

#[test]
fn mujoco_scene_is_built_like_the_others() {
    let out = Command::new(env!("CARGO_BIN_EXE_simrob-odebench"))
        .arg("--check-mujoco")
        .output()
        .expect("running simrob-odebench");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    // Without MuJoCo's library the check fails, saying so.
    if !out.status.success() && err.contains("MuJoCo's library is not found") {
        assert!(
            std::env::var("SIMROB_REQUIRE_MUJOCO").as_deref() != Ok("1"),
            "MuJoCo is required here but: {err}"
        );
        eprintln!("mujoco_scene_is_built_like_the_others: not run: {err}");
        return;
    }
    assert!(out.status.success(), "{text}\n{err}");
    let n = numbers(&text);
    let get = |k: &str| {
        n.get(k)
            .unwrap_or_else(|| panic!("no {k} in\n{text}"))
            .clone()
    };
    // The SumBot (1.2 kg chassis, two 0.1 kg wheels) and the 0.6 kg ball; the field is static.
    let mass = get("mass");
    assert!((mass[0] - 2.0).abs() < 1e-9, "spec mass {mass:?}");
    assert!((mass[1] - mass[0]).abs() < 1e-9, "model mass {mass:?}");
    // Two free bodies (7 + 7 positions, 6 + 6 velocities) and two wheel hinges.
    assert_eq!(get("sizes"), vec![16.0, 14.0], "{text}");
    // The SumBot comes to rest at simrob's height (within 2 mm), the ball on the floor.
    let z = get("rest_z");
    assert!((z[0] - z[1]).abs() < 0.002, "resting chassis z {z:?}");
    let ball = get("ball_z");
    assert!((ball[0] - ball[1]).abs() < 0.001, "resting ball z {ball:?}");
    // Wheels at 3 rad/s drive it at about ω·r, towards −X as in ODE and in simrob (MuJoCo's
    // hinge turns its wheel against the chassis, ODE's Hinge2 motor the chassis against the
    // wheel).
    let s = get("straight");
    assert!((0.75..1.1).contains(&s[0]), "MuJoCo's speed / ω·r {s:?}");
    assert!((0.75..1.1).contains(&s[1]), "simrob's speed / ω·r {s:?}");
}
