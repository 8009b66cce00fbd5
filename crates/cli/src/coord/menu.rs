//! The operator's terminal menu of `simrob coord cc`: one command per line, read into an
//! [`OperatorCommand`] for the Control Center. A line that does not read changes nothing: it
//! gets an error naming what was wrong and is not sent.

use simrob_coord::model::{TaskKind, TaskSpec};
use simrob_coord::wire::OperatorCommand;

/// What the menu prints for `h`.
pub const MENU_HELP: &str = "\
Control Center menu (one command per line):
  r | robots                     list the robots and their status
  t | tasks                      list the tasks and their states
  send ROBOT TASK                send a task straight to a robot
  announce TASK                  negotiate it (Contract Net)
  submit TASK                    hand it to the current policy
  abort ID | clear ID            stop a task | forget a final (or blocked) task
  mode cnp|hungarian|greedy      switch the allocation policy
  h | help, q | quit
TASK: goto X Y | path X,Y X,Y … | perceive SECONDS | pan_tilt PAN TILT SECONDS
      then optionally: id N, after ID,ID…, in WORLD (simrob, mrs, swarm)";

/// What a menu line asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum MenuAction {
    Command(OperatorCommand),
    Help,
    Quit,
}

fn num(s: Option<&&str>, what: &str) -> Result<f64, String> {
    let s = s.ok_or_else(|| format!("missing {what}"))?;
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{what}: {s:?} is not a number"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("{what} must be a finite number, found {s}"))
    }
}

fn task_id(w: Option<&&str>, what: &str) -> Result<u64, String> {
    let w = w.ok_or_else(|| format!("missing {what}"))?;
    w.parse()
        .map_err(|_| format!("{what}: {w:?} is not a task id (a whole number ≥ 0)"))
}

/// Reads `goto 1 2 after 3,4 in mrs` and the like.
pub fn parse_task(words: &[&str]) -> Result<TaskSpec, String> {
    let (kind, mut rest) = match words.first().copied() {
        Some("goto") => (
            TaskKind::Goto {
                x: num(words.get(1), "x")?,
                y: num(words.get(2), "y")?,
            },
            3,
        ),
        Some("perceive") => (
            TaskKind::Perceive {
                seconds: num(words.get(1), "seconds")?,
            },
            2,
        ),
        Some("pan_tilt") | Some("pantilt") => (
            TaskKind::PanTilt {
                pan: num(words.get(1), "pan")?,
                tilt: num(words.get(2), "tilt")?,
                seconds: num(words.get(3), "seconds")?,
            },
            4,
        ),
        Some("path") => {
            let mut points = Vec::new();
            let mut i = 1;
            while let Some(w) = words.get(i) {
                let Some((x, y)) = w.split_once(',') else {
                    break;
                };
                points.push([num(Some(&x), "x")?, num(Some(&y), "y")?]);
                i += 1;
            }
            (TaskKind::Path { points }, i)
        }
        Some(other) => {
            return Err(format!(
                "unknown task {other:?} (goto, path, perceive, pan_tilt)"
            ))
        }
        None => return Err("missing task (goto, path, perceive, pan_tilt)".into()),
    };
    let mut spec = TaskSpec::new(0, kind);
    while rest < words.len() {
        let key = words[rest];
        if !matches!(key, "id" | "after" | "in") {
            return Err(format!(
                "unexpected {key:?} (after the task: id N, after ID,ID…, in WORLD)"
            ));
        }
        let value = words
            .get(rest + 1)
            .ok_or_else(|| format!("{key} needs a value"))?;
        match key {
            "id" => spec.id = task_id(Some(value), "id")?,
            "after" => {
                spec.after = value
                    .split(',')
                    .map(|t| task_id(Some(&t), "after"))
                    .collect::<Result<_, _>>()?
            }
            _ => spec.world = Some(value.to_string()),
        }
        rest += 2;
    }
    simrob_coord::wire::check_task(&spec).map_err(|e| e.to_string())?;
    Ok(spec)
}

/// No more words after a command that takes none (or after its last argument).
fn done(words: &[&str], used: usize, usage: &str) -> Result<(), String> {
    match words.get(used) {
        None => Ok(()),
        Some(w) => Err(format!("unexpected {w:?} (usage: {usage})")),
    }
}

/// Reads one menu line; `Ok(None)` for a blank line.
pub fn parse_line(line: &str) -> Result<Option<MenuAction>, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some(&first) = words.first() else {
        return Ok(None);
    };
    let cmd = match first {
        "h" | "help" | "?" => {
            done(&words, 1, "h")?;
            return Ok(Some(MenuAction::Help));
        }
        "q" | "quit" | "exit" => {
            done(&words, 1, "q")?;
            return Ok(Some(MenuAction::Quit));
        }
        "r" | "robots" => {
            done(&words, 1, "r")?;
            OperatorCommand::Robots
        }
        "t" | "tasks" => {
            done(&words, 1, "t")?;
            OperatorCommand::Tasks
        }
        "send" => {
            let robot = words.get(1).ok_or("usage: send ROBOT TASK")?;
            let robot = robot
                .parse()
                .map_err(|_| format!("{robot:?} is not a robot id (usage: send ROBOT TASK)"))?;
            OperatorCommand::Send {
                robot,
                task: parse_task(&words[2..])?,
            }
        }
        "announce" => OperatorCommand::Announce {
            task: parse_task(&words[1..])?,
        },
        "submit" => OperatorCommand::Submit {
            task: parse_task(&words[1..])?,
        },
        "abort" => {
            let task = task_id(words.get(1), "task id (usage: abort ID)")?;
            done(&words, 2, "abort ID")?;
            OperatorCommand::Abort { task }
        }
        "clear" => {
            let task = task_id(words.get(1), "task id (usage: clear ID)")?;
            done(&words, 2, "clear ID")?;
            OperatorCommand::Clear { task }
        }
        "mode" => {
            let policy = words
                .get(1)
                .ok_or("usage: mode cnp|hungarian|greedy")?
                .parse()
                .map_err(|e: simrob_coord::wire::UnknownPolicy| e.to_string())?;
            done(&words, 2, "mode cnp|hungarian|greedy")?;
            OperatorCommand::Mode { policy }
        }
        other => return Err(format!("unknown command {other:?}")),
    };
    Ok(Some(MenuAction::Command(cmd)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use simrob_coord::cc::{CcConfig, ControlCenter};
    use simrob_coord::model::{RobotInfo, TaskClass};
    use simrob_coord::wire::{Envelope, Msg, Policy};

    fn command(line: &str) -> OperatorCommand {
        match parse_line(line) {
            Ok(Some(MenuAction::Command(c))) => c,
            other => panic!("{line:?}: expected a command, got {other:?}"),
        }
    }

    fn error(line: &str) -> String {
        match parse_line(line) {
            Err(e) => e,
            other => panic!("{line:?}: expected an error, got {other:?}"),
        }
    }

    #[test]
    fn every_command_of_the_help_reads() {
        assert_eq!(parse_line("   "), Ok(None));
        assert_eq!(parse_line("h"), Ok(Some(MenuAction::Help)));
        assert_eq!(parse_line("quit"), Ok(Some(MenuAction::Quit)));
        assert_eq!(command("r"), OperatorCommand::Robots);
        assert_eq!(command(" tasks "), OperatorCommand::Tasks);
        assert_eq!(
            command("send 1 goto 0.2 -0.1"),
            OperatorCommand::Send {
                robot: 1,
                task: TaskSpec::new(0, TaskKind::Goto { x: 0.2, y: -0.1 })
            }
        );
        let mut t = TaskSpec::new(0, TaskKind::Goto { x: 300.0, y: 120.0 });
        t.world = Some("swarm".into());
        assert_eq!(
            command("announce goto 300 120 in swarm"),
            OperatorCommand::Announce { task: t }
        );
        let mut t = TaskSpec::new(7, TaskKind::Perceive { seconds: 3.0 });
        t.after = vec![1, 2];
        assert_eq!(
            command("send 2 perceive 3 after 1,2 id 7"),
            OperatorCommand::Send { robot: 2, task: t }
        );
        assert_eq!(
            command("submit path 500,110 100,110"),
            OperatorCommand::Submit {
                task: TaskSpec::new(
                    0,
                    TaskKind::Path {
                        points: vec![[500.0, 110.0], [100.0, 110.0]]
                    }
                )
            }
        );
        assert_eq!(
            command("submit pan_tilt 0.5 -0.2 2"),
            OperatorCommand::Submit {
                task: TaskSpec::new(
                    0,
                    TaskKind::PanTilt {
                        pan: 0.5,
                        tilt: -0.2,
                        seconds: 2.0
                    }
                )
            }
        );
        assert_eq!(command("abort 3"), OperatorCommand::Abort { task: 3 });
        assert_eq!(command("clear 3"), OperatorCommand::Clear { task: 3 });
        assert_eq!(
            command("mode HUNGARIAN"),
            OperatorCommand::Mode {
                policy: Policy::Hungarian
            }
        );
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        for (line, says) in [
            ("fly 1 2", "unknown command \"fly\""),
            ("send", "usage: send ROBOT TASK"),
            ("send one goto 1 2", "\"one\" is not a robot id"),
            ("send 1", "missing task"),
            ("send 1 teleport 1 2", "unknown task \"teleport\""),
            ("send 1 goto 1", "missing y"),
            ("send 1 goto 1 north", "y: \"north\" is not a number"),
            ("send 1 goto nan 2", "x must be a finite number"),
            ("send 1 goto inf 2", "x must be a finite number"),
            ("send 1 goto 1 2 3", "unexpected \"3\""),
            ("send 1 goto 1 2 after", "after needs a value"),
            ("send 1 goto 1 2 after 1,,2", "after: \"\" is not a task id"),
            ("send 1 goto 1 2 after -1", "after: \"-1\" is not a task id"),
            ("send 1 goto 1 2 id x", "id: \"x\" is not a task id"),
            ("send 1 goto 1 2 in", "in needs a value"),
            ("announce path", "a path needs at least one point"),
            ("announce path 1,2 3,y", "y: \"y\" is not a number"),
            ("submit perceive -1", "seconds must not be negative"),
            ("submit pan_tilt 1 2", "missing seconds"),
            ("abort", "missing task id"),
            ("abort three", "\"three\" is not a task id"),
            ("abort 3 4", "unexpected \"4\""),
            ("clear 3 now", "unexpected \"now\""),
            ("mode", "usage: mode"),
            ("mode auction", "unknown allocation policy \"auction\""),
            ("mode cnp greedy", "unexpected \"greedy\""),
            ("r all", "unexpected \"all\""),
            ("q now", "unexpected \"now\""),
        ] {
            let e = error(line);
            assert!(e.contains(says), "{line:?}: {e:?} does not say {says:?}");
        }
    }

    #[test]
    fn a_refused_line_changes_nothing_in_the_control_center() {
        let mut cc = ControlCenter::new(CcConfig::default());
        cc.join(RobotInfo {
            robot: 1,
            name: "r1".into(),
            kind: "swarm".into(),
            world: "swarm".into(),
            capabilities: vec![TaskClass::Movement],
            speed: 1.0,
        })
        .unwrap();
        let send = |cc: &mut ControlCenter, line: &str| -> String {
            let Ok(Some(MenuAction::Command(cmd))) = parse_line(line) else {
                return "not sent".into();
            };
            let env = Envelope {
                from: 1_000_000,
                to: None,
                msg: Msg::Operator {
                    command: Box::new(cmd),
                },
            };
            cc.handle(env, 0.0).unwrap();
            let mut answer = String::new();
            while let Some(e) = cc.poll_transmit() {
                if let Msg::Report { text } = e.msg {
                    answer = text;
                }
            }
            answer
        };
        assert_eq!(send(&mut cc, "send 1 goto 1 2"), "task 1 sent to robot 1");
        let before = (cc.tasks_table(), cc.robots_table(), cc.policy());
        for line in [
            "send 1 goto 1",                // does not read: never sent
            "mode auction",                 // does not read
            "send 9 goto 1 2",              // reads, refused: no robot 9
            "send 1 perceive 2",            // refused: robot 1 cannot perceive
            "send 1 goto 1 2 id 1",         // refused: task id 1 is taken
            "submit goto 1 2 after 5 id 5", // refused: a cycle
            "clear 1",                      // refused: task 1 is not final
            "abort 42",                     // refused: no task 42
        ] {
            let answer = send(&mut cc, line);
            assert!(
                answer == "not sent" || answer.starts_with("error: "),
                "{line:?}: {answer:?}"
            );
            assert_eq!(
                (cc.tasks_table(), cc.robots_table(), cc.policy()),
                before,
                "{line:?} changed the Control Center"
            );
        }
    }
}
