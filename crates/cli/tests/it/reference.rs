//! The command-line reference in the docs (`docs/reference/cli-help.md`) is generated from the
//! binaries' own `--help`, so it cannot drift: this test walks every subcommand and fails when
//! the page differs. `SIMROB_UPDATE_DOCS=1 cargo test -p simrob --test it reference` rewrites it.

use std::path::PathBuf;
use std::process::Command;

use crate::support::repo;

/// The `--help` text of `bin` with the given subcommand path.
fn help(bin: &str, path: &[String]) -> String {
    let out = Command::new(bin)
        .args(path)
        .arg("--help")
        .env("NO_COLOR", "1")
        .output()
        .expect("run --help");
    assert!(out.status.success(), "{path:?} --help failed");
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// The subcommands listed under `Commands:` in a help text (without `help`).
fn subcommands(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| l.trim_end() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

fn walk(bin: &str, name: &str, path: &mut Vec<String>, page: &mut String) {
    let text = help(bin, path);
    let title = std::iter::once(name.to_owned())
        .chain(path.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    page.push_str(&format!(
        "## {title}\n\n```text\n{}\n```\n\n",
        text.trim_end()
    ));
    for sub in subcommands(&text) {
        path.push(sub);
        walk(bin, name, path, page);
        path.pop();
    }
}

#[test]
fn the_command_line_reference_is_what_the_binaries_print() {
    let mut page = String::from(
        "# Every command's help\n\n\
         What `--help` prints for every command and subcommand of `simrob` and for `simrob-load`,\n\
         generated from the binaries (`SIMROB_UPDATE_DOCS=1 cargo test -p simrob --test it reference`\n\
         rewrites this page; the test fails when it is out of date). The\n\
         [command-line overview](cli.md) says which guide covers each command.\n\n",
    );
    walk(
        env!("CARGO_BIN_EXE_simrob"),
        "simrob",
        &mut Vec::new(),
        &mut page,
    );
    walk(
        env!("CARGO_BIN_EXE_simrob-load"),
        "simrob-load",
        &mut Vec::new(),
        &mut page,
    );
    up_to_date("cli-help.md", &page);
}

/// Writes `docs/reference/NAME` under `SIMROB_UPDATE_DOCS=1`, else fails when it differs.
fn up_to_date(name: &str, page: &str) {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/reference")
        .join(name);
    if std::env::var_os("SIMROB_UPDATE_DOCS").is_some() {
        std::fs::write(&file, page).expect("write the reference page");
        return;
    }
    let committed = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        committed == page,
        "docs/reference/{name} is out of date: run \
         SIMROB_UPDATE_DOCS=1 cargo test -p simrob --test it reference"
    );
}

/// A Markdown table cell: `|` escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

fn or_none(default: &str) -> &str {
    if default.is_empty() {
        "(none)"
    } else {
        default
    }
}

#[test]
fn the_configuration_reference_is_what_the_code_says() {
    use simrob_session::keydoc::{LIMIT_KEYS, SERVER_KEYS};
    let mut page = String::from(
        "# Configuration keys\n\n\
         Every key of every configuration file, with its default and the values it accepts,\n\
         generated from the tables the parsers read (`SIMROB_UPDATE_DOCS=1 cargo test -p simrob\n\
         --test it reference` rewrites this page; the test fails when it is out of date, and the\n\
         crates' tests check each table against its parser: the defaults are the defaults, a\n\
         value at each bound is accepted and one past it refused). Worlds without a\n\
         configuration file (the Mobile Robot Simulator, the swarm, coordination, and the viewer\n\
         of every command but `simrob serve`) take their settings and limits as command-line\n\
         flags, each with its default in [every command's help](cli-help.md); the swarm's scenario files are described in\n\
         [Swarm scenario files](swarm-scenario.md).\n\n\
         ## The SimRob server\n\n\
         `simrob serve --config FILE` reads the legacy `Configuration.data` form (one\n\
         `key value` per line; `key=value` and `key: value` work too; `#` starts a comment) or,\n\
         when the name ends in `.toml`, a flat TOML table of the same keys. Keys are\n\
         case-insensitive; an unknown key, a value of the wrong type or out of range is an error\n\
         naming the line, and the server does not start. No file is needed: every key has a\n\
         default (`simrob serve --list-config` prints them; `config/Configuration.data` and\n\
         `config/simrob.toml` are complete examples).\n\n\
         ### Server keys (the SimRob manual §6, and simrob's own)\n\n",
    );
    let table = |page: &mut String, keys: &[simrob_session::keydoc::KeyDoc]| {
        page.push_str("| key | default | accepts | meaning |\n|---|---|---|---|\n");
        for k in keys {
            page.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                k.key,
                cell(or_none(k.default)),
                cell(&k.allowed.to_string()),
                cell(k.meaning)
            ));
        }
        page.push('\n');
    };
    table(&mut page, SERVER_KEYS);
    page.push_str(
        "### Limits\n\n\
         Who may change the world, how much work one datagram may cause, how large the world may\n\
         grow, which values agents may set, and how much the server sends to an address that has\n\
         not shown it asked: see [Security and limits](../security.md) for what each protects.\n\n",
    );
    table(&mut page, LIMIT_KEYS);
    page.push_str(
        "### The web viewer\n\n\
         What the viewer of `simrob serve --gui` accepts from its pages: see [the viewer's\n\
         limits](../viewer.md#limits). Every command that serves a viewer takes the same limits\n\
         as `--viewer-…` flags (each key is its flag without the dashes: `viewermaxpages` is\n\
         `--viewer-max-pages`), with the same ranges and defaults; on `simrob serve` a flag given\n\
         on the command line wins over the file's key. Times are in seconds.\n\n\
         | key | flag | default | accepts | meaning |\n|---|---|---|---|---|\n",
    );
    for k in simrob_session::VIEWER_KEYS {
        page.push_str(&format!(
            "| `{}` | `{}` | {} | {} | {}: {} |\n",
            k.key,
            k.flag,
            k.default_text(),
            cell(&k.allowed().to_string()),
            k.view,
            cell(k.meaning)
        ));
    }
    page.push_str(
        "\n### The files the server reads\n\n\
         A scenario file (SimRob XML messages) that `simrob serve --scenario`, `simrob run` or\n\
         `simrob send` reads is held to `maxscenariobytes` (the `--config` file's, else 64 MiB);\n\
         `--max-scenario-bytes BYTES` on the command line wins over the key. A larger file is\n\
         refused before anything starts, with its size, the limit and how to raise it. The\n\
         configuration file itself is read before any of its keys, so no key can set its own\n\
         limit: it is fixed at 64 MiB (over ten thousand times a complete file), and a larger\n\
         one is refused the same way.\n\n",
    );
    page.push_str(
        "### Command names\n\n\
         Every command's name can be changed (the SimRob manual §6); two commands may not share a\n\
         name. The [protocol reference](protocol.md) describes each command.\n\n\
         | key | default |\n|---|---|\n",
    );
    for c in simrob_protocol::Command::ALL {
        page.push_str(&format!(
            "| `{}` | `{}` |\n",
            c.config_key(),
            c.default_name()
        ));
    }
    page.push_str(
        "\n## A FutRob robot (`ini.config`)\n\n\
         `simrob soccer player --robot-config ini.config` (and each robot of `simrob soccer team`)\n\
         reads FutRob's `key=value` file with `[section]` headers and `#` comments. Keys may sit in\n\
         any section and are case-sensitive; an unknown key, a key given twice or a value out of\n\
         range is refused with the file and line.\n\n\
         ### Robot profile (FutRob's keys)\n\n",
    );
    let futrob = |page: &mut String, keys: &[simrob_futrob::config::Key]| {
        page.push_str("| key | unit | default | accepts | meaning |\n|---|---|---|---|---|\n");
        for k in keys {
            let accepts = match k.range {
                Some((min, max)) => format!("{min} … {max}"),
                None if k.unit == "0/1" => "0 or 1".into(),
                None => String::new(),
            };
            page.push_str(&format!(
                "| `{}` | {} | {} | {} | {} |\n",
                k.name,
                cell(k.unit),
                cell(k.default),
                cell(&accepts),
                cell(k.meaning)
            ));
        }
        page.push('\n');
    };
    futrob(&mut page, simrob_futrob::config::PROFILE_KEYS);
    page.push_str("### Simulator, team link and brain\n\n");
    futrob(&mut page, simrob_futrob::config::KEYS);
    up_to_date("config.md", &page);
}

/// One request of each command, as the protocol reference shows it.
/// The SimRob manual's SumBot, as `scenarios/sumbot.xml` creates it.
fn sumbot() -> simrob_protocol::Request {
    let xml = std::fs::read(repo("scenarios/sumbot.xml")).expect("scenarios/sumbot.xml");
    let mut requests =
        simrob_protocol::decode_datagram(&xml, &simrob_protocol::CommandKeys::default());
    assert_eq!(requests.len(), 1, "sumbot.xml holds one request");
    requests.remove(0).expect("sumbot.xml decodes")
}

/// What a command's examples need said beside them.
fn notes(c: simrob_protocol::Command) -> &'static str {
    use simrob_protocol::Command;
    match c {
        Command::RegisterAgent => {
            "`<IP>` and `<Port>` are where the agent receives: the server sends its broadcasts,\n\
             other agents' confirmations and its `Info_Request` answers there, but only once that\n\
             exact address (IP and port) has sent the server a datagram, on loopback too: until\n\
             then only the sender of the registration hears back (its confirmation). Send from the\n\
             socket you receive on (the shipped clients do); a program that receives on another\n\
             port sends one datagram from it (its registration, or an `Info_Request` about\n\
             itself). Bind that socket before registering: an address whose port is closed is\n\
             removed at the first ICMP \"port unreachable\" (agents that leave: [the SimRob\n\
             guide](../simrob.md)). The server's own address is refused.\n\n"
        }
        Command::CreateEntity => {
            "A robot is bodies (`Box`, `Sphere`, `Cylinder`, `WheelCylinder`) and the joints between\n\
             them (`FixedJoint`; `WheelJoint`, ODE's Hinge2: `Axis_1` its suspension and steering\n\
             axis, held by a spring of `Hardness` and `Bounciness`, `Axis_2` the wheel's spin\n\
             axis, turned by its motor up to `Maximum_Torque` N·m; axes in the world frame),\n\
             `<Motors>` lists the wheel joints `Robot_Motor_Control` drives, and\n\
             `<Reference_Body>` is the body whose pose the broadcasts' `<Robot_Entity>` gives.\n\
             The first example is the manual's SumBot (`scenarios/sumbot.xml`): its front is its\n\
             chassis' −X side, wheel joint 0 is its left wheel (on −Y) and joint 1 its right, and\n\
             both at +3 rad/s drive it forwards, towards −X. Then a field (mass −1: fixed) and a\n\
             ball. An entity id is used once: creating it again is refused (the world keeps what\n\
             earlier agents created; `Save` and `Load` bring a run back to a saved state).\n\n"
        }
        Command::Synchronize => {
            "`<Iteration>` is the `<Iteration>` of the broadcast being answered (the latest one\n\
             the agent was sent). In synchronous mode the server waits, up to `Sync_Wait`, for\n\
             each synchronous agent to answer the iteration it was last sent: an older iteration\n\
             answers nothing and is an error (`Error: Synchronize: iteration 4 is older than\n\
             iteration 5, the broadcast agent \"driver\" must answer now; answer the latest\n\
             broadcast (send its <Iteration>)`), except a copy of the last `Synchronize` taken\n\
             (sent again, or duplicated on the way), which is ignored without a word. An\n\
             iteration that has not happened yet is an error too. When `Sync_Wait` passes first, the\n\
             next iteration runs without the missing answers and nothing is sent about it; the server\n\
             counts such waits and logs the agents that were missing (see\n\
             [`simrob serve`](../simrob.md#serve-a-world-simrob-serve), *Time*). Outside synchronous mode a\n\
             `Synchronize` changes nothing. After a `Load` the iteration goes back to the\n\
             saved one: answer the next broadcast's iteration, lower as it is.\n\n"
        }
        Command::HumanoidAction => {
            "Parameters are FutRob's, in centimetres and degrees, angles positive to the right;\n\
             every action's parameters, ranges, defaults and timing are in [humanoid soccer\n\
             messages](humanoid.md#ask-for-an-action-entity_request-commandhumanoid_action)\n\
             (and `simrob send action --help` lists each action's parameters).\n\n"
        }
        _ => "",
    }
}

fn examples(c: simrob_protocol::Command) -> Vec<simrob_protocol::Request> {
    use simrob_protocol::*;
    let control = |request| Request::Control {
        request,
        response: None,
    };
    let entity = |request| Request::Entity {
        request,
        response: Some(true),
    };
    match c {
        Command::RegisterAgent => vec![Request::Agent(AgentRequest::RegisterAgent {
            agent_type: AgentType::RobotController,
            port: 5010,
            ip: "127.0.0.1".into(),
            sync: false,
            broadcast: 0.1,
            key: "driver".into(),
        })],
        Command::InfoRequest => vec![Request::Agent(AgentRequest::InfoRequest {
            requester: "driver".into(),
            requested: "viewer".into(),
        })],
        Command::UnregisterAgent => vec![Request::Agent(AgentRequest::UnregisterAgent {
            key: "driver".into(),
        })],
        Command::Synchronize => vec![Request::Agent(AgentRequest::Synchronize {
            key: "driver".into(),
            iteration: 42,
        })],
        Command::RegisterMaterialsInteractions => {
            vec![control(ControlRequest::RegisterMaterialsInteractions {
                materials: vec![
                    Material {
                        id: MaterialId(1),
                        name: "rubber".into(),
                    },
                    Material {
                        id: MaterialId(2),
                        name: "carpet".into(),
                    },
                ],
                interactions: vec![Interaction {
                    material_1: MaterialId(1),
                    material_2: MaterialId(2),
                    contact: Contact {
                        friction: 0.8,
                        ..Contact::DEFAULT
                    },
                }],
            })]
        }
        Command::CreateEntity => vec![
            sumbot(),
            control(ControlRequest::CreateEntity(EntitySpec::Field {
                entity_id: EntityId(1),
                bodies: vec![BodySpec {
                    id: 0,
                    shape: Shape::Box {
                        size: [4.0, 4.0, 0.1],
                    },
                    material: Some(MaterialId(2)),
                    mass: Some(-1.0),
                    position: [0.0, 0.0, -0.05],
                    rotation: [0.0, 0.0, 0.0],
                }],
                joints: vec![],
            })),
            control(ControlRequest::CreateEntity(EntitySpec::Ball {
                entity_id: EntityId(2),
                material: Some(MaterialId(1)),
                mass: Some(0.1),
                position: [0.0, 0.0, 0.5],
                rotation: [0.0, 0.0, 0.0],
                radius: 0.05,
            })),
        ],
        Command::InitializeSimulation => vec![control(ControlRequest::InitializeSimulation)],
        Command::SetStepMode => vec![control(ControlRequest::SetStepMode(true))],
        Command::MakeStep => vec![Request::Control {
            request: ControlRequest::MakeStep,
            response: Some(true),
        }],
        Command::SetAutoAdjustMode => vec![control(ControlRequest::SetAutoAdjustMode(false))],
        Command::SetSyncMode => vec![control(ControlRequest::SetSyncMode(true))],
        Command::SetSyncWait => vec![control(ControlRequest::SetSyncWait(0.5))],
        Command::SetTimestep => vec![control(ControlRequest::SetTimestep(0.01))],
        Command::SetWorldGravity => vec![control(ControlRequest::SetWorldGravity(-9.8))],
        Command::SetWorldHardness => vec![control(ControlRequest::SetWorldHardness(0.00001))],
        Command::SetWorldBounciness => vec![control(ControlRequest::SetWorldBounciness(0.2))],
        Command::Save => vec![control(ControlRequest::Save("match.sav".into()))],
        Command::Load => vec![control(ControlRequest::Load("match.sav".into()))],
        Command::SetFastMode => vec![control(ControlRequest::SetFastMode(false))],
        Command::SetStepsPerIteration => vec![control(ControlRequest::SetStepsPerIteration(5))],
        Command::SetEntityPosition => vec![entity(EntityRequest::SetEntityPosition {
            entity_id: EntityId(2),
            position: [0.5, 0.0, 0.2],
        })],
        Command::RobotMotorControl => {
            vec![entity(EntityRequest::two_wheels(EntityId(3), 4.0, -4.0))]
        }
        Command::SetRollingResistance => vec![control(ControlRequest::SetRollingResistance {
            material_1: MaterialId(1),
            material_2: MaterialId(2),
            coefficient: 0.05,
        })],
        Command::HumanoidAction => vec![entity(EntityRequest::HumanoidAction {
            entity_id: EntityId(4),
            name: "walk".into(),
            params: vec![("distance".into(), "30".into())],
        })],
    }
}

/// What the server answers each command's examples, run in order on a fresh session (agent
/// `driver` at 127.0.0.1:5010, `viewer` at 5011, humanoid 4 made first): the first
/// example's confirmation text or `Info_Request` answer. A `Synchronize` is never answered
/// (its example names an iteration to come, whose error is left out).
fn confirmations() -> Vec<(simrob_protocol::Command, String)> {
    use simrob_protocol::*;
    use simrob_session::{Event, FileResult, ServerConfig, Session};
    use std::time::Instant;
    let keys = CommandKeys::default();
    let mut s = Session::new(ServerConfig::default());
    let now = Instant::now();
    let driver: std::net::SocketAddr = "127.0.0.1:5010".parse().expect("address");
    let viewer: std::net::SocketAddr = "127.0.0.1:5011".parse().expect("address");
    let register = |port: u16, key: &str| {
        encode_request(
            &Request::Agent(AgentRequest::RegisterAgent {
                agent_type: AgentType::Gui,
                port,
                ip: "127.0.0.1".into(),
                sync: false,
                broadcast: -1.0,
                key: key.into(),
            }),
            &keys,
        )
    };
    s.handle_datagram(viewer, register(5011, "viewer").as_bytes(), now);
    let humanoid = Request::Control {
        request: ControlRequest::CreateEntity(EntitySpec::Humanoid {
            entity_id: EntityId(4),
            team: "cyan".into(),
            position: [0.5, 0.0],
            heading: 0.0,
            profile: None,
            seed: None,
            material: None,
        }),
        response: None,
    };
    s.handle_datagram(viewer, encode_request(&humanoid, &keys).as_bytes(), now);
    let mut saved = String::new();
    let mut out = Vec::new();
    for c in Command::ALL {
        let mut answers = Vec::new();
        for mut request in examples(*c) {
            if let Request::Control { response, .. } | Request::Entity { response, .. } =
                &mut request
            {
                *response = Some(true);
            }
            std::iter::from_fn(|| s.poll_transmit()).for_each(drop);
            s.handle_datagram(driver, encode_request(&request, &keys).as_bytes(), now);
            while let Some(e) = s.poll_event() {
                let result = match e {
                    Event::SaveWanted {
                        ticket,
                        path,
                        contents,
                    } => {
                        saved = contents;
                        Some((ticket, FileResult::Saved(path)))
                    }
                    Event::LoadWanted { ticket, .. } => {
                        Some((ticket, FileResult::Loaded(saved.clone())))
                    }
                    _ => None,
                };
                if let Some((ticket, result)) = result {
                    s.handle_file_result(ticket, result, now)
                        .expect("the file result is taken");
                }
            }
            let answer = std::iter::from_fn(|| s.poll_transmit())
                .filter(|t| t.to == driver)
                .find_map(|t| match decode_server_message(&t.payload) {
                    Ok(ServerMessage::Response(Response::Text(text))) => Some(text),
                    Ok(ServerMessage::Response(r @ Response::AgentInformation { .. })) => {
                        Some(encode_server_message(&ServerMessage::Response(r)))
                    }
                    _ => None,
                })
                .unwrap_or_default();
            answers.push(answer);
        }
        let first = answers.into_iter().next().unwrap_or_default();
        let shown = if *c == Command::Synchronize {
            String::new()
        } else {
            first
        };
        out.push((*c, shown));
    }
    out
}

#[test]
fn the_protocol_reference_is_what_the_code_says() {
    use simrob_protocol::*;
    let keys = CommandKeys::default();
    let mut page = String::from(
        "# The SimRob protocol\n\n\
         Every message an agent sends the server and every message it gets back, generated from\n\
         the protocol crate's command table and encoder (`SIMROB_UPDATE_DOCS=1 cargo test -p\n\
         simrob --test it reference` rewrites this page; the test fails when it is out of date,\n\
         and every example below is decoded back to the request it was written from). The SimRob\n\
         manual defines the messages (its sections are given); simrob's extensions are marked\n\
         with the extension they belong to (*humanoid soccer*, *agents that leave*). How to send them by hand is in [the SimRob guide](../simrob.md).\n\n\
         ## Datagrams\n\n\
         One UDP datagram holds one or more `<Message>` roots; a `<Message>` holds\n\
         `<Agent_Message>` elements (agent registration and synchronisation) and\n\
         `<Simulation_Message>` elements, each holding any number of `<Control_Request>`\n\
         (the world) and `<Entity_Request>` (one entity) elements. Requests run in document\n\
         order. Elements may nest at most `maxxmldepth` (128) deep; deeper, the datagram is not\n\
         well-formed and nothing in it runs. A request holding an element it does not read, at any depth (inside `<Data>`, a\n\
         `<Body>`, a `<Joint>`, a `<Motor>`, a `<Material>` or an `<Interaction>` too: a name\n\
         misspelt or in another case, one its command or its parent does not take, one given\n\
         twice) is an error naming the element and where it is, and does not run: a misspelt\n\
         optional `<Mas>` does not leave the body at the default mass. A required element\n\
         missing is an error naming it, where it is, and any child that looks like it misspelt\n\
         (`…/Motor[1]: missing required child <Value>; found <Valeu>: is it misspelt?`).\n\
         `<Response>true</Response>`\n\
         inside a control or entity request asks for a\n\
         confirmation (configuration key `defaultresponserequest` when absent). Units are\n\
         metres, kilograms, seconds and radians, Z up (but `Humanoid_Action`'s parameters,\n\
         which are FutRob's: centimetres and degrees). Every command's name can be changed\n\
         with its [configuration key](config.md#command-names); confirmations and errors then\n\
         name it so.\n\n\
         ## Commands\n\n\
         | command | element | defined in | what it does |\n|---|---|---|---|\n",
    );
    for c in Command::ALL {
        let anchor = c.default_name().to_ascii_lowercase();
        page.push_str(&format!(
            "| [`{}`](#{anchor}) | `{}` | {} | {} |\n",
            c.default_name(),
            c.family().element(),
            c.section(),
            cell(c.summary())
        ));
    }
    page.push('\n');
    for c in Command::ALL {
        page.push_str(&format!(
            "### {}\n\n{} ({}; configuration key `{}`).\n\n",
            c.default_name(),
            {
                let s = c.summary();
                let mut chars = s.chars();
                match chars.next() {
                    Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
                    None => String::new(),
                }
            },
            c.section(),
            c.config_key()
        ));
        page.push_str(notes(*c));
        for request in examples(*c) {
            assert_eq!(
                request.kind(),
                *c,
                "the example of {c:?} is another command"
            );
            let xml = message_element(&request, &keys).to_xml_pretty();
            let back = decode_datagram(xml.as_bytes(), &keys);
            assert_eq!(back, vec![Ok(request.clone())], "{c:?} does not round-trip");
            page.push_str(&format!("```xml\n{}\n```\n\n", xml.trim_end()));
        }
    }
    page.push_str(
        "## Values\n\n\
         A datagram is UTF-8 text (a byte-order mark is skipped); an XML declaration naming\n\
         another encoding is refused (`Error: the datagram declares encoding \"ISO-8859-1\", but\n\
         SimRob messages are UTF-8 only: …`). Values are read trimmed of white space, keys too\n\
         (`<Key> driver </Key>` is `driver`).\n\n\
         - **Booleans**: `true`, `false`, `1`, `0`, in any case; anything else is an error\n\
           (`Fast_Mode: expected true or false (or 1 or 0; in any case), found \"yes\"`).\n\
         - **Numbers**: decimal, with an optional sign, fraction and exponent (`-0.5`, `1e-2`,\n\
           `+3`, `-0`); not `NaN` or `inf`. Replies write numbers in the same forms (`-0`\n\
           stays `-0`; very small or large values with an exponent, `-3.4434683e-10`).\n\
         - **Integers** (ids, ports, counts, iterations): digits with an optional sign (`3`, `+3`,\n\
           `03`); a decimal point or exponent is refused, `3.0` included (`Steps_Per_Iteration:\n\
           expected an integer (0 to 4294967295; digits, no decimal point or exponent), found\n\
           \"3.0\"`).\n\
         - **Rotations** (`Rotation_X/Y/Z`, `rot_x/y/z`) are extrinsic X-Y-Z Euler angles in\n\
           radians: R = Rz·Ry·Rx ([conventions](../getting-started.md#conventions)).\n\n\
         Also accepted: a bare `<Agent_Message>`, `<Simulation_Message>`, `<Control_Request>`\n\
         or `<Entity_Request>` root, as if inside a `<Message>`; several roots in one datagram;\n\
         `Entity_id` and `Entity_Id` alike; an empty `<Motors/>` (nothing changes, and it is\n\
         confirmed). A NUL or any other character XML 1.0 forbids, trailing ones included,\n\
         makes the datagram not well-formed: nothing in it runs.\n\n",
    );
    page.push_str(
        "## What the server sends\n\n\
         A `<Response>` answers a request that asked for one (a confirmation, or an error whose\n\
         text says what is wrong and where), or an `Info_Request`. A `<Broadcast>` goes to every\n\
         agent after each iteration, as often as its registration asked: every body's pose and\n\
         velocities (`<DrawData>`, each body with its `<Entity_id>`, a simrob addition) and every\n\
         robot's and ball's pose (`<Entities_Info>`: a robot's is its reference body's, in\n\
         `<Robot_Entity>`, a ball's in `<Ball_Entity>`). A broadcast larger than\n\
         `maximumdatagramsize` is split into parts, each a complete `<Broadcast>` with\n\
         `<Part>` and `<Parts>` after `<Iteration>`: `<Part>` counts from 1 to `<Parts>`, every\n\
         part carries the same `<Iteration>`, and the bodies of `<DrawData>` and the entries of\n\
         `<Entities_Info>` are spread over the parts in order, so the world of that iteration is\n\
         the parts' `<DrawData>` joined and their `<Entities_Info>` joined. Parts may come in any\n\
         order, and one may be lost. A synchronous agent answers a split broadcast once, with\n\
         its `<Iteration>`, when it has all the parts (or when it gives that iteration up: the\n\
         server waits at most `Sync_Wait` anyway).\n\n\
         A broadcast carries no simulated time. Each iteration advances it by the timestep times\n\
         the steps per iteration (`Set_Timestep`, `Set_Steps_Per_Iteration`; the\n\
         configuration's `defaultstepsize` and one step until set, or what a `Load` brought; their\n\
         confirmations go to every agent, but auto-adjust changes the steps per iteration\n\
         without a word), so the simulated time of iteration n is the sum of those over the\n\
         iterations since the start or the last `Load`.\n\n\
         Text a client gave that the server sends back (a key, a file name, an entity's name)\n\
         has every character XML 1.0 forbids (control characters other than tab, newline and\n\
         carriage return) replaced by U+FFFD, so every answer is well-formed XML (a character\n\
         reference to one, `&#1;`, is read as that character and shown so too); a datagram\n\
         holding such a character itself is not well-formed XML 1.0 and runs nothing (`Error:\n\
         XML syntax error at byte 59 (line 1, column 60): character U+0001 is not allowed in\n\
         XML 1.0 …`); a\n\
         `Register_Agent` whose key has a control character is refused, the key being sent to\n\
         every agent in confirmations. An `Info_Request` is answered, as the SimRob manual has\n\
         it, at the address its `Requester` registered, whichever socket sent it (an agent may\n\
         send from one socket and receive on another); a `Requester` or `Requested` that is not\n\
         registered is an error to the sender. Whoever names another agent as `Requester` thus\n\
         has it sent one small answer per request, to an address that registered to receive\n\
         (and at most `amplificationfactor` times what it sent, when it is not proven).\n\n\
         The server never answers what only a server sends: a datagram whose root is a\n\
         `<Response>` or a `<Broadcast>`, or whose text starts `Error:`, is dropped unanswered\n\
         (counted, and logged at `--log debug`), never answered with an error, so two servers,\n\
         or a server sent its own datagrams, never answer each other without end. No agent may\n\
         register at the server's own address (`Error: Register_Agent: 127.0.0.1:5005 is the\n\
         server's own address; …`).\n\n",
    );
    let responses = [
        Response::Text(
            "Sucessfully added agent with key driver, port 5010 and ip 127.0.0.1".into(),
        ),
        Response::AgentInformation {
            key: "viewer".into(),
            port: 5011,
            ip: "127.0.0.1".into(),
        },
    ];
    let broadcast = Broadcast {
        iteration: 42,
        part: None,
        bodies: vec![BodyState {
            entity_id: EntityId(2),
            id: 0,
            shape: Shape::Sphere { radius: 0.05 },
            material: MaterialId(1),
            mass: 0.1,
            position: [0.0, 0.0, 0.05],
            rotation: [0.0, 0.0, 0.0],
            linear_velocity: [0.0, 0.0, 0.0],
            angular_velocity: [0.0, 0.0, 0.0],
        }],
        entities: vec![
            EntityInfo {
                kind: EntityInfoKind::Robot,
                entity_id: EntityId(3),
                position: [0.0, -0.1, 0.0922],
                rotation: [0.0, 0.134, 0.0],
            },
            EntityInfo {
                kind: EntityInfoKind::Ball,
                entity_id: EntityId(2),
                position: [0.0, 0.0, 0.05],
                rotation: [0.0, 0.0, 0.0],
            },
        ],
    };
    let messages = responses
        .into_iter()
        .map(ServerMessage::Response)
        .chain([ServerMessage::Broadcast(broadcast)]);
    for m in messages {
        let xml = encode_server_message(&m);
        assert_eq!(
            decode_server_message(xml.as_bytes()).ok(),
            Some(m.clone()),
            "{m:?} does not round-trip"
        );
        let pretty: String = tree::parse_elements(&xml)
            .expect("the encoder writes XML")
            .iter()
            .map(|e| e.to_xml_pretty())
            .collect();
        page.push_str(&format!("```xml\n{}\n```\n\n", pretty.trim_end()));
    }
    page.push_str(
        "### Answers, command by command\n\n\
         What the server answers each command above, for the examples above run in order\n\
         (generated by running them). A control or entity request is confirmed only when it asks\n\
         (`<Response>true</Response>`, or `defaultresponserequest`), as `Command: what was\n\
         done`, the command named as configured; its confirmation goes to every agent whose\n\
         address has sent the server something (up to `maxconfirmationfanout`; to the sender\n\
         alone when the sender is not proven), and to the sender. An error goes to the sender\n\
         only, as `Error: …`. A `Save` or `Load` is confirmed once the file is written or read.\n\n\
         | command | answer |\n|---|---|\n",
    );
    for (c, answer) in confirmations() {
        let shown = if answer.is_empty() {
            "none: it is never confirmed (an error if its key or iteration is wrong)".to_string()
        } else if answer.starts_with('<') {
            format!("`{answer}` (to the requester's address)")
        } else {
            format!("`{answer}`")
        };
        page.push_str(&format!("| `{}` | {} |\n", c.default_name(), cell(&shown)));
    }
    page.push('\n');
    page.push_str(
        "The humanoid soccer extension's messages (making a humanoid, its brain's registration\n\
         and broadcast, every action) are described in [humanoid soccer messages](humanoid.md).\n",
    );
    up_to_date("protocol.md", &page);
}
