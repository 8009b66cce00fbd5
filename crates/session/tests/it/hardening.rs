//! The SimRob session against hostile senders, driven sans-IO with made-up addresses and
//! instants: each test is one failure found by attacking the server, with the exact input.

use simrob_protocol::EntityId;
use std::time::{Duration, Instant};

use simrob_session::{ServerConfig, Session};

use crate::common;
use common::*;

fn gravity(s: &Session) -> f64 {
    s.world().params().gravity
}

#[test]
fn a_datagram_that_is_not_well_formed_changes_nothing() {
    let mut s = session();
    let before = gravity(&s);
    let me = addr("127.0.0.1:4000");
    let bad = "<Message><Simulation_Message><Control_Request Command=\"Set_World_Gravity\"><Gravity>-1</Gravity><Response>true</Response></Control_Request></Simulation_Message></MESSAGE>";
    s.handle_datagram(me, bad.as_bytes(), Instant::now());
    let out = texts_to(&drain(&mut s), me);
    assert_eq!(gravity(&s), before, "the gravity changed");
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].contains("nothing in it was executed"), "{out:?}");
    assert!(!out[0].contains("Gravity set"), "{out:?}");
    // Truncated: the same.
    let good = control(
        "<Control_Request Command=\"Set_World_Gravity\"><Gravity>-1</Gravity></Control_Request><Control_Request Command=\"Set_Timestep\"><Timestep>0.02</Timestep></Control_Request>",
    );
    s.handle_datagram(me, &good.as_bytes()[..good.len() - 30], Instant::now());
    assert_eq!(gravity(&s), before);
    // Well-formed, it runs.
    s.handle_datagram(me, good.as_bytes(), Instant::now());
    assert_eq!(gravity(&s), -1.0);
}

#[test]
fn an_unproven_address_is_sent_at_most_three_times_what_it_sent() {
    // Registering another port on the same IP (here a LAN address, where a source can be
    // forged): the other port never asked and gets nothing; the registering address gets at
    // most 3× its bytes, however many iterations run.
    let mut s = session();
    let attacker = addr("192.0.2.10:5000");
    let victim = addr("192.0.2.10:6000");
    let reg = register("victim", "192.0.2.10", 6000, 0.0);
    s.handle_datagram(attacker, reg.as_bytes(), Instant::now());
    let own = register("own", "192.0.2.10", 5000, 0.0);
    s.handle_datagram(attacker, own.as_bytes(), Instant::now());
    let sent_in = (reg.len() + own.len()) as u64;
    s.handle_datagram(
        addr("127.0.0.1:9000"),
        control("<Control_Request Command=\"Initialize_Simulation\"/>").as_bytes(),
        Instant::now(),
    );
    let mut out_bytes = 0u64;
    let t0 = Instant::now();
    for i in 0..500 {
        s.handle_timeout(t0 + Duration::from_millis(i));
        for t in drain(&mut s) {
            assert_ne!(t.to, victim, "the victim was sent a datagram");
            if t.to == attacker {
                out_bytes += t.payload.len() as u64;
            }
        }
    }
    assert!(s.world().iteration() >= 400);
    assert!(
        out_bytes <= 3 * sent_in,
        "{out_bytes} bytes out for {sent_in} in"
    );
    assert!(s.withheld() > 0);
}

#[test]
fn a_confirmation_does_not_fan_out_to_hundreds_of_agents() {
    let mut s = session();
    for i in 0..200u16 {
        let reg = register(&format!("a{i}"), "127.0.0.1", 10_000 + i, -1.0);
        s.handle_datagram(
            addr(&format!("127.0.0.1:{}", 10_000 + i)),
            reg.as_bytes(),
            Instant::now(),
        );
    }
    drain(&mut s);
    let me = addr("127.0.0.1:10000");
    s.handle_datagram(
        me,
        control("<Control_Request Command=\"Set_World_Gravity\"><Gravity>-3</Gravity><Response>true</Response></Control_Request>").as_bytes(),
        Instant::now(),
    );
    let out = drain(&mut s);
    assert_eq!(out.len(), 1, "one request, {} datagrams", out.len());
    assert_eq!(out[0].to, me);
}

#[test]
fn a_registration_storm_is_answered_whole_and_linearly() {
    // 1,000 agents registering at once: each confirmation went to every agent, half a
    // million datagrams, and most registrations were lost.
    let mut s = session();
    let mut out = 0;
    for i in 0..1000u16 {
        let port = 20_000 + i;
        let reg = register(&format!("storm{i}"), "127.0.0.1", port, -1.0);
        s.handle_datagram(
            addr(&format!("127.0.0.1:{port}")),
            reg.as_bytes(),
            Instant::now(),
        );
        let sent = drain(&mut s);
        assert!(
            texts_to(&sent, addr(&format!("127.0.0.1:{port}")))
                .iter()
                .any(|t| t.contains(&format!("key storm{i},"))),
            "agent {i} not confirmed"
        );
        out += sent.len();
    }
    assert_eq!(s.agents().len(), 1000);
    assert!(
        out <= 64 * 65 / 2 + 1000,
        "{out} datagrams for 1000 registrations"
    );
}

#[test]
fn registrations_past_maxagents_are_refused_and_leave_the_table_as_it_was() {
    // The agent table had no bound: every Register_Agent under a new key (a forged source
    // address each, from anywhere) added an agent that no ICMP reply would ever remove, so a
    // flood of them grew the server without end (100,000 registrations with broadcast 0 on
    // loopback: 10 to 87 MB, and a core busy broadcasting to them).
    let mut config = ServerConfig::default();
    config.limits.max_agents = 3;
    let mut s = session_with(config);
    let now = Instant::now();
    for i in 0..5u16 {
        let port = 30_000 + i;
        let reg = register(&format!("k{i}"), "192.0.2.30", port, 0.0);
        s.handle_datagram(addr(&format!("192.0.2.30:{port}")), reg.as_bytes(), now);
    }
    let out = drain(&mut s);
    assert_eq!(s.agents().len(), 3);
    let refused = texts_to(&out, addr("192.0.2.30:30004"));
    assert!(
        refused
            .iter()
            .any(|t| t.contains("already has 3 agents") && t.contains("maxagents")),
        "{refused:?}"
    );
    // A key already registered may register again (from a new port: a controller run
    // again), full table or not.
    let again = register("k0", "192.0.2.30", 31_000, 0.0);
    s.handle_datagram(addr("192.0.2.30:31000"), again.as_bytes(), now);
    drain(&mut s);
    assert_eq!(s.agents().len(), 3);
    assert_eq!(
        s.agents().iter().find(|a| a.key == "k0").map(|a| a.addr),
        Some(addr("192.0.2.30:31000"))
    );
}

#[test]
fn strangers_may_not_change_the_world_nor_use_someone_elses_key() {
    let mut s = session();
    let before = gravity(&s);
    let stranger = addr("192.0.2.99:7000");
    let set = control(
        "<Control_Request Command=\"Set_World_Gravity\"><Gravity>-1</Gravity></Control_Request>",
    );
    s.handle_datagram(stranger, set.as_bytes(), Instant::now());
    let out = texts_to(&drain(&mut s), stranger);
    assert_eq!(gravity(&s), before, "a stranger changed the gravity");
    assert!(out[0].contains("worldaccess"), "{out:?}");

    // A registered agent on the LAN may.
    let owner = addr("192.0.2.20:7000");
    s.handle_datagram(
        owner,
        register("robot", "192.0.2.20", 7000, -1.0).as_bytes(),
        Instant::now(),
    );
    s.handle_datagram(owner, set.as_bytes(), Instant::now());
    assert_eq!(gravity(&s), -1.0);
    drain(&mut s);

    // Another address may not take its key, synchronize it nor ask with it.
    let thief = addr("192.0.2.21:7000");
    s.handle_datagram(
        thief,
        register("robot", "192.0.2.21", 7000, -1.0).as_bytes(),
        Instant::now(),
    );
    let sync = "<Message><Agent_Message Command=\"Synchronize\"><Key>robot</Key><Iteration>0</Iteration></Agent_Message></Message>";
    s.handle_datagram(thief, sync.as_bytes(), Instant::now());
    let info = "<Message><Agent_Message Command=\"Info_Request\"><Requester>robot</Requester><Requested>robot</Requested></Agent_Message></Message>";
    s.handle_datagram(thief, info.as_bytes(), Instant::now());
    let out = drain(&mut s);
    let to_thief = texts_to(&out, thief);
    assert_eq!(to_thief.len(), 2, "{to_thief:?}");
    assert!(to_thief.iter().all(|t| t.contains("Error")), "{to_thief:?}");
    // Info_Request answers go to the requester's registered address: the owner's.
    assert!(
        to_thief.iter().all(|t| !t.contains("Agent_Information")),
        "{to_thief:?}"
    );
    assert_eq!(
        s.agents().iter().find(|a| a.key == "robot").map(|a| a.addr),
        Some(owner)
    );
    // The owner may.
    s.handle_datagram(owner, info.as_bytes(), Instant::now());
    assert!(texts_to(&drain(&mut s), owner)[0].contains("Agent_Information"));
}

#[test]
fn with_worldaccess_agents_even_local_strangers_are_refused() {
    let mut config = ServerConfig::default();
    config.set("worldaccess", "agents").unwrap();
    let mut s = Session::new(config);
    let local = addr("127.0.0.1:7100");
    s.handle_datagram(local, SOCCER.as_bytes(), Instant::now());
    assert_eq!(s.world().entity_ids().count(), 0);
    s.handle_datagram(
        local,
        register("me", "127.0.0.1", 7100, -1.0).as_bytes(),
        Instant::now(),
    );
    s.handle_datagram(local, SOCCER.as_bytes(), Instant::now());
    assert_eq!(s.world().entity_ids().count(), 3);
}

#[test]
fn shared_secret_policy_admits_only_keys_that_carry_it() {
    let mut config = ServerConfig::default();
    config.set("worldaccess", "secret").unwrap();
    config.set("worldsecret", "lab42").unwrap();
    let mut s = Session::new(config);
    let a = addr("127.0.0.1:7200");
    let b = addr("127.0.0.1:7201");
    s.handle_datagram(
        a,
        register("robot1", "127.0.0.1", 7200, -1.0).as_bytes(),
        Instant::now(),
    );
    s.handle_datagram(a, SOCCER.as_bytes(), Instant::now());
    assert_eq!(s.world().entity_ids().count(), 0);
    s.handle_datagram(
        b,
        register("lab42:robot2", "127.0.0.1", 7201, -1.0).as_bytes(),
        Instant::now(),
    );
    s.handle_datagram(b, SOCCER.as_bytes(), Instant::now());
    assert_eq!(s.world().entity_ids().count(), 3);
}

#[test]
fn one_datagram_cannot_ask_for_unbounded_work() {
    let mut s = session();
    let me = addr("127.0.0.1:4000");
    // 258 bytes that blocked the server for 3 s.
    let steps = control("<Control_Request Command=\"Set_Steps_Per_Iteration\"><Steps_Per_Iteration>100000</Steps_Per_Iteration></Control_Request><Control_Request Command=\"Make_Step\"/>");
    s.handle_datagram(me, steps.as_bytes(), Instant::now());
    let out = texts_to(&drain(&mut s), me).join("\n");
    assert!(out.contains("maxstepsperiteration"), "{out}");
    assert!(s.world().modes().steps_per_iteration <= 1000);
    // 400 Loads in one datagram: none runs.
    let loads = control(
        &"<Control_Request Command=\"Load\"><File>x.xml</File></Control_Request>".repeat(400),
    );
    s.handle_datagram(me, loads.as_bytes(), Instant::now());
    let out = texts_to(&drain(&mut s), me).join("\n");
    assert!(out.contains("maxrequestsperdatagram"), "{out}");
    assert!(std::iter::from_fn(|| s.poll_event())
        .all(|e| !matches!(e, simrob_session::Event::LoadWanted { .. })));
    let two = control(
        &"<Control_Request Command=\"Save\"><File>x.xml</File></Control_Request>".repeat(2),
    );
    s.handle_datagram(me, two.as_bytes(), Instant::now());
    let out = texts_to(&drain(&mut s), me).join("\n");
    assert!(out.contains("maxfilerequestsperdatagram"), "{out}");
}

fn info_request(key: &str) -> String {
    format!(
        "<Message><Agent_Message Command=\"Info_Request\"><Requester>{key}</Requester><Requested>{key}</Requested></Agent_Message></Message>"
    )
}

#[test]
fn long_work_runs_in_slices_and_other_agents_are_answered_meanwhile() {
    // Set_Steps_Per_Iteration + Make_Step once blocked the server for seconds: nobody was
    // answered until the iteration was over. Now an iteration of more than stepsperslice
    // physics steps runs in slices, and the shell reads datagrams between them.
    let mut s = session();
    let (a, b) = (addr("127.0.0.1:5001"), addr("127.0.0.1:5002"));
    for (key, who) in [("a", a), ("b", b)] {
        s.handle_datagram(
            who,
            register(key, "127.0.0.1", who.port(), -1.0).as_bytes(),
            Instant::now(),
        );
    }
    let heavy = control("<Control_Request Command=\"Initialize_Simulation\"/><Control_Request Command=\"Set_Step_Mode\"><Step_Mode>true</Step_Mode></Control_Request><Control_Request Command=\"Set_Steps_Per_Iteration\"><Steps_Per_Iteration>1000</Steps_Per_Iteration></Control_Request><Control_Request Command=\"Make_Step\"/>");
    s.handle_datagram(a, heavy.as_bytes(), Instant::now());
    drain(&mut s);
    let t0 = Instant::now();
    let slice = ServerConfig::default().limits.steps_per_slice;
    assert!(s.handle_timeout(t0));
    assert_eq!(s.world().iteration(), 0, "one slice is not the iteration");
    assert!(s.world().iteration_in_progress());
    assert_eq!(s.poll_timeout(t0), Some(t0), "the rest is due at once");
    // Agent b asks between slices and is answered at once.
    s.handle_datagram(b, info_request("b").as_bytes(), t0);
    let out = texts_to(&drain(&mut s), b);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].contains("<Key>b</Key>"), "{out:?}");
    // A request that changes the world waits for the iteration, and so does what the same
    // sender sends after it; another agent's requests do not.
    let before = gravity(&s);
    s.handle_datagram(
        a,
        control("<Control_Request Command=\"Set_World_Gravity\"><Gravity>-2</Gravity><Response>true</Response></Control_Request>").as_bytes(),
        t0,
    );
    s.handle_datagram(a, info_request("a").as_bytes(), t0);
    s.handle_datagram(b, info_request("b").as_bytes(), t0);
    let out = drain(&mut s);
    assert_eq!(gravity(&s), before);
    assert!(texts_to(&out, a).is_empty(), "{out:?}");
    assert_eq!(texts_to(&out, b).len(), 1, "{out:?}");
    let mut slices = 1;
    while s.world().iteration_in_progress() {
        assert!(s.handle_timeout(t0));
        slices += 1;
        if s.world().iteration_in_progress() {
            assert!(drain(&mut s).is_empty());
        }
    }
    assert_eq!(slices, 1000 / slice, "{slice} steps per slice");
    assert_eq!(s.world().iteration(), 1);
    // Once the iteration is over, the waiting requests ran, in order.
    assert_eq!(gravity(&s), -2.0);
    let out = texts_to(&drain(&mut s), a);
    assert_eq!(out.len(), 2, "{out:?}");
    assert!(out[0].contains("Gravity set to -2"), "{out:?}");
    assert!(out[1].contains("<Key>a</Key>"), "{out:?}");
    // Step mode: nothing more until the next Make_Step.
    assert!(!s.handle_timeout(t0));
}

#[test]
fn requests_waiting_for_an_iteration_are_bounded() {
    let mut config = ServerConfig::default();
    config.limits.max_queued_requests = 3;
    let mut s = session_with(config);
    let me = addr("127.0.0.1:5001");
    let heavy = control("<Control_Request Command=\"Initialize_Simulation\"/><Control_Request Command=\"Set_Step_Mode\"><Step_Mode>true</Step_Mode></Control_Request><Control_Request Command=\"Set_Steps_Per_Iteration\"><Steps_Per_Iteration>1000</Steps_Per_Iteration></Control_Request><Control_Request Command=\"Make_Step\"/>");
    s.handle_datagram(me, heavy.as_bytes(), Instant::now());
    let t0 = Instant::now();
    assert!(s.handle_timeout(t0));
    drain(&mut s);
    let step = control("<Control_Request Command=\"Make_Step\"/>");
    for _ in 0..3 {
        s.handle_datagram(me, step.as_bytes(), t0);
    }
    assert!(texts_to(&drain(&mut s), me).is_empty());
    s.handle_datagram(me, step.as_bytes(), t0);
    let out = texts_to(&drain(&mut s), me).join("\n");
    assert!(out.contains("maxqueuedrequests"), "{out}");
    while s.handle_timeout(t0) {}
    // The first iteration, then the three granted while it ran; not the refused fourth.
    assert_eq!(s.world().iteration(), 4);
}

#[test]
fn values_that_would_break_every_client_are_refused() {
    let mut s = session();
    let me = addr("127.0.0.1:4000");
    let before = s.world().entity_pose(EntityId(8));
    for (body, key) in [
        ("<Entity_Request Command=\"Set_Entity_Position\"><Entity_Id>8</Entity_Id><Position_X>1e308</Position_X><Position_Y>0</Position_Y><Position_Z>0</Position_Z></Entity_Request>", "maxposition"),
        ("<Control_Request Command=\"Set_World_Gravity\"><Gravity>1e308</Gravity></Control_Request>", "maxgravity"),
        ("<Control_Request Command=\"Set_Timestep\"><Timestep>10</Timestep></Control_Request>", "maxtimestep"),
        ("<Entity_Request Command=\"Robot_Motor_Control\"><Entity_Id>3</Entity_Id><Motors><Motor><Wheel_Joint_Id>0</Wheel_Joint_Id><Value>1e300</Value></Motor></Motors></Entity_Request>", "maxvelocity"),
    ] {
        s.handle_datagram(me, control(body).as_bytes(), Instant::now());
        let out = texts_to(&drain(&mut s), me).join("\n");
        assert!(out.contains(key), "{body}: {out}");
    }
    assert_eq!(s.world().entity_pose(EntityId(8)), before);
    assert_eq!(s.world().params().timestep, 0.01);
}

#[test]
fn the_world_cannot_grow_past_its_entity_and_body_limits() {
    // 300 robots at one spot once took 1.2 GB and 7 s a step; 1,000 never finished a step.
    let mut s = session();
    let me = addr("127.0.0.1:4000");
    let robot = include_str!("../../../../scenarios/sumbot.xml");
    let mut refused = 0;
    for i in 0..300u32 {
        let r = robot.replacen(
            "<Entity_id>3</Entity_id>",
            &format!("<Entity_id>{}</Entity_id>", 100 + i),
            1,
        );
        s.handle_datagram(me, r.as_bytes(), Instant::now());
        if texts_to(&drain(&mut s), me)
            .iter()
            .any(|t| t.contains("maxentities") || t.contains("maxbodies"))
        {
            refused += 1;
        }
    }
    let config = ServerConfig::default();
    assert!(refused > 0);
    assert!(s.world().entity_ids().count() <= config.limits.max_entities);
    assert!(
        simrob_world::PhysicsBackend::body_count(s.world().physics()) <= config.limits.max_bodies
    );
}

#[test]
fn an_unregistered_sender_cannot_write_in_the_viewers_response_panel() {
    let mut s = session();
    s.set_observed(true);
    while s.poll_event().is_some() {}
    let responses = |s: &mut Session| -> Vec<String> {
        std::iter::from_fn(|| s.poll_event())
            .filter_map(|e| match e {
                simrob_session::Event::Response(t) => Some(t),
                _ => None,
            })
            .collect()
    };
    let set = control("<Control_Request Command=\"Set_World_Gravity\"><Gravity>-2</Gravity><Response>true</Response></Control_Request>");
    let local = addr("127.0.0.1:7300");
    s.handle_datagram(local, set.as_bytes(), Instant::now());
    assert_eq!(gravity(&s), -2.0, "a local sender may change the world");
    assert!(
        responses(&mut s).is_empty(),
        "an unregistered sender reached the panel"
    );
    s.handle_datagram(
        local,
        register("panel", "127.0.0.1", 7300, -1.0).as_bytes(),
        Instant::now(),
    );
    s.handle_datagram(local, set.as_bytes(), Instant::now());
    let shown = responses(&mut s);
    assert!(shown.iter().any(|t| t.contains("Gravity")), "{shown:?}");
}

#[test]
fn a_configured_save_key_seals_save_files() {
    let mut config = ServerConfig::default();
    config.set("savekey", "our lab's secret").unwrap();
    let session = Session::new(config);
    assert_eq!(
        session.save_key(),
        &simrob_world::SaveKey::from_secret("our lab's secret")
    );
    assert_ne!(
        Session::new(ServerConfig::default()).save_key(),
        session.save_key(),
        "a session without a configured key uses the process's own"
    );
}

fn materials(ids: std::ops::Range<u32>) -> String {
    let m: String = ids
        .map(|i| format!("<Material><Material_Id>{i}</Material_Id><Material_Name>m{i}</Material_Name></Material>"))
        .collect();
    control(&format!(
        "<Control_Request Command=\"Register_Materials_Interactions\">{m}<Response>true</Response></Control_Request>"
    ))
}

#[test]
fn materials_and_interactions_cannot_grow_past_their_limits() {
    // 1000 datagrams of ~700 new materials each once made 698,235 materials, 714 MB of
    // memory and a 76 MB save file no Load would read.
    let mut config = ServerConfig::default();
    config.limits.max_materials = 10;
    config.limits.max_interactions = 2;
    let mut s = session_with(config);
    let me = addr("127.0.0.1:4000");
    let have = s.world().material_count();
    s.handle_datagram(me, materials(100..108).as_bytes(), Instant::now());
    let out = texts_to(&drain(&mut s), me).join("\n");
    assert!(out.contains("Registered 8 materials"), "{out}");
    let have = have + 8;
    assert_eq!(s.world().material_count(), have);
    // Past the limit: refused whole, nothing registered.
    s.handle_datagram(me, materials(200..220).as_bytes(), Instant::now());
    let out = texts_to(&drain(&mut s), me).join("\n");
    assert!(out.contains("configuration key maxmaterials"), "{out}");
    assert_eq!(s.world().material_count(), have);
    assert!(!s.world().has_material(simrob_protocol::MaterialId(200)));
    // Registering known materials again (new names) is not growth.
    s.handle_datagram(me, materials(100..108).as_bytes(), Instant::now());
    let out = texts_to(&drain(&mut s), me).join("\n");
    assert!(out.contains("Registered 8 materials"), "{out}");
    // Interactions: pairs, counted once whichever order they are named in.
    let pair = |a: u32, b: u32| {
        format!("<Interaction><Material_1>{a}</Material_1><Material_2>{b}</Material_2><Hardness>0.1</Hardness><Bounciness>0.2</Bounciness><Slip1>0</Slip1><Slip2>0</Slip2><Friction>1</Friction></Interaction>")
    };
    let interactions = |pairs: &[(u32, u32)]| {
        let body: String = pairs.iter().map(|&(a, b)| pair(a, b)).collect();
        control(&format!("<Control_Request Command=\"Register_Materials_Interactions\">{body}<Response>true</Response></Control_Request>"))
    };
    s.handle_datagram(
        me,
        interactions(&[(100, 101), (101, 100), (102, 103)]).as_bytes(),
        Instant::now(),
    );
    let out = texts_to(&drain(&mut s), me).join("\n");
    assert!(out.contains("3 interactions"), "{out}");
    assert_eq!(s.world().interaction_count(), 2);
    s.handle_datagram(me, interactions(&[(104, 105)]).as_bytes(), Instant::now());
    let out = texts_to(&drain(&mut s), me).join("\n");
    assert!(out.contains("configuration key maxinteractions"), "{out}");
    assert_eq!(s.world().interaction_count(), 2);
}

#[test]
fn a_full_queue_never_refuses_what_runs_between_slices_and_strangers_do_not_fill_it() {
    let mut config = ServerConfig::default();
    config.limits.max_queued_requests = 3;
    config.limits.world_access = simrob_session::WorldAccess::Agents;
    let mut s = session_with(config);
    let me = addr("127.0.0.1:5001");
    s.handle_datagram(
        me,
        register("me", "127.0.0.1", 5001, -1.0).as_bytes(),
        Instant::now(),
    );
    let heavy = control("<Control_Request Command=\"Initialize_Simulation\"/><Control_Request Command=\"Set_Step_Mode\"><Step_Mode>true</Step_Mode></Control_Request><Control_Request Command=\"Set_Steps_Per_Iteration\"><Steps_Per_Iteration>1000</Steps_Per_Iteration></Control_Request><Control_Request Command=\"Make_Step\"/>");
    s.handle_datagram(me, heavy.as_bytes(), Instant::now());
    let t0 = Instant::now();
    assert!(s.handle_timeout(t0));
    assert!(s.world().iteration_in_progress());
    drain(&mut s);
    let step = control("<Control_Request Command=\"Make_Step\"/>");
    for _ in 0..3 {
        s.handle_datagram(me, step.as_bytes(), t0);
    }
    // The queue is full. A stranger's world change is refused at once for want of access,
    // not for the queue, and takes no place in it.
    let stranger = addr("127.0.0.1:6000");
    let gravity_before = gravity(&s);
    s.handle_datagram(
        stranger,
        control("<Control_Request Command=\"Set_World_Gravity\"><Gravity>-3</Gravity></Control_Request>").as_bytes(),
        t0,
    );
    let out = texts_to(&drain(&mut s), stranger).join("\n");
    assert!(out.contains("may not change the world"), "{out}");
    assert!(!out.contains("maxqueuedrequests"), "{out}");
    // A registration, an Info_Request and a Synchronize are answered at once.
    let b = addr("127.0.0.1:5002");
    s.handle_datagram(b, register("b", "127.0.0.1", 5002, -1.0).as_bytes(), t0);
    s.handle_datagram(b, info_request("b").as_bytes(), t0);
    s.handle_datagram(
        b,
        "<Message><Agent_Message Command=\"Synchronize\"><Key>b</Key><Iteration>0</Iteration></Agent_Message></Message>".as_bytes(),
        t0,
    );
    let out = texts_to(&drain(&mut s), b);
    let all = out.join("\n");
    assert!(!all.contains("maxqueuedrequests"), "{all}");
    assert!(all.contains("<Key>b</Key>"), "{all}");
    assert!(s.agents().iter().any(|a| a.key == "b"), "b is registered");
    // A registered agent's world change still waits its turn, and a full queue refuses it.
    s.handle_datagram(me, step.as_bytes(), t0);
    let out = texts_to(&drain(&mut s), me).join("\n");
    assert!(out.contains("maxqueuedrequests"), "{out}");
    while s.handle_timeout(t0) {}
    assert_eq!(s.world().iteration(), 4);
    assert_eq!(gravity(&s), gravity_before);
}

#[test]
fn a_key_with_a_control_character_is_refused_and_every_answer_stays_well_formed_xml() {
    let mut s = session();
    let good = addr("127.0.0.1:5001");
    s.handle_datagram(
        good,
        register("good", "127.0.0.1", 5001, -1.0).as_bytes(),
        Instant::now(),
    );
    drain(&mut s);
    let evil = addr("127.0.0.1:5002");
    s.handle_datagram(
        evil,
        register("evil\u{1}", "127.0.0.1", 5002, -1.0).as_bytes(),
        Instant::now(),
    );
    let out = drain(&mut s);
    let to_evil = texts_to(&out, evil).join("\n");
    assert!(to_evil.contains("control character"), "{to_evil}");
    assert!(
        texts_to(&out, good).is_empty(),
        "the others are told nothing: {out:?}"
    );
    assert_eq!(s.agents().len(), 1);
    // Whatever a client names is sent back well-formed: an Info_Request about a key with a
    // control character, a Save of a file name with one.
    s.handle_datagram(
        good,
        "<Message><Agent_Message Command=\"Info_Request\"><Requester>good</Requester><Requested>x\u{1}y</Requested></Agent_Message></Message>".as_bytes(),
        Instant::now(),
    );
    s.handle_datagram(
        good,
        control("<Control_Request Command=\"Save\"><File>a\u{1}.xml</File><Response>true</Response></Control_Request>").as_bytes(),
        Instant::now(),
    );
    let out = texts_to(&drain(&mut s), good);
    assert!(!out.is_empty());
    for text in out {
        assert!(!text.contains('\u{1}'), "{text:?}");
        simrob_protocol::decode_server_message(text.as_bytes())
            .unwrap_or_else(|e| panic!("{text:?}: {e}"));
    }
}

fn ball(id: u32, radius: &str, mass: &str) -> String {
    control(&format!("<Control_Request Command=\"Create_Entity\" Type=\"Ball\"><Data><Entity_id>{id}</Entity_id><Material>1</Material><Mass>{mass}</Mass><Position_X>0</Position_X><Position_Y>1</Position_Y><Position_Z>0.5</Position_Z><Rotation_X>0</Rotation_X><Rotation_Y>0</Rotation_Y><Rotation_Z>0</Rotation_Z><Radius>{radius}</Radius></Data><Response>true</Response></Control_Request>"))
}

#[test]
fn a_body_too_large_or_too_heavy_is_refused_and_the_world_goes_on() {
    // A ball of radius 1e15 m once made every iteration diverge, freezing the world.
    let mut s = session();
    let me = addr("127.0.0.1:4000");
    let entities = s.world().entity_ids().count();
    for (radius, mass, key) in [
        ("1e15", "0.1", "maxbodysize"),
        ("0.05", "1e300", "maxbodymass"),
    ] {
        s.handle_datagram(me, ball(500, radius, mass).as_bytes(), Instant::now());
        let out = texts_to(&drain(&mut s), me).join("\n");
        assert!(
            out.contains(&format!("configuration key {key}")),
            "{radius} {mass}: {out}"
        );
        assert!(
            !out.contains("1000000000000000 m"),
            "numbers are short: {out}"
        );
        assert_eq!(s.world().entity_ids().count(), entities);
    }
    // Within the limits, and static (-1), it is created.
    s.handle_datagram(me, ball(500, "50", "-1").as_bytes(), Instant::now());
    let out = texts_to(&drain(&mut s), me).join("\n");
    assert!(!out.contains("Error"), "{out}");
    assert_eq!(s.world().entity_ids().count(), entities + 1);
}

#[test]
fn an_info_request_is_answered_to_the_requesters_registered_address_whoever_sends_it() {
    // SimRob manual §2.2, as docs/reference/protocol.md says: the answer goes to the agent
    // named in Requester, at the address it registered, not to the socket that asked.
    let mut s = session();
    let a = addr("127.0.0.1:5001");
    s.handle_datagram(
        a,
        register("a", "127.0.0.1", 5001, -1.0).as_bytes(),
        Instant::now(),
    );
    drain(&mut s);
    let other = addr("127.0.0.1:6000");
    s.handle_datagram(other, info_request("a").as_bytes(), Instant::now());
    let out = drain(&mut s);
    assert!(texts_to(&out, other).is_empty(), "{out:?}");
    let to_a = texts_to(&out, a);
    assert_eq!(to_a.len(), 1, "{out:?}");
    assert!(to_a[0].contains("<Key>a</Key>"), "{to_a:?}");
    // A requester that is not registered is an error to the sender.
    s.handle_datagram(other, info_request("nobody").as_bytes(), Instant::now());
    let out = texts_to(&drain(&mut s), other).join("\n");
    assert!(out.contains("is not a registered agent"), "{out}");
}

#[test]
fn a_refusal_names_its_command_once() {
    // "Robot_Motor_Control: Robot_Motor_Control: robot 3 has no motor on wheel joint 5": the
    // session put the command's name before a reason that already began with it.
    let mut s = session();
    let me = addr("127.0.0.1:4001");
    for (request, says) in [
        (
            "<Entity_Request Command=\"Robot_Motor_Control\"><Entity_Id>3</Entity_Id><Motors><Motor><Wheel_Joint_Id>5</Wheel_Joint_Id><Value>1</Value></Motor></Motors><Response>true</Response></Entity_Request>",
            "Error: Robot_Motor_Control: robot 3 has no motor on wheel joint 5",
        ),
        (
            "<Entity_Request Command=\"Set_Entity_Position\"><Entity_Id>7</Entity_Id><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>0</Position_Z><Response>true</Response></Entity_Request>",
            "Error: Set_Entity_Position: entity 7 is a Field",
        ),
        (
            "<Entity_Request Command=\"Robot_Motor_Control\"><Entity_Id>99</Entity_Id><Motors><Motor><Wheel_Joint_Id>0</Wheel_Joint_Id><Value>1</Value></Motor></Motors><Response>true</Response></Entity_Request>",
            "Error: Robot_Motor_Control: entity 99 does not exist",
        ),
    ] {
        s.handle_datagram(me, control(request).as_bytes(), Instant::now());
        let out = texts_to(&drain(&mut s), me).join("\n");
        assert!(out.contains(says), "{out}");
        for name in ["Robot_Motor_Control", "Set_Entity_Position"] {
            assert!(
                !out.contains(&format!("{name}: {name}")),
                "said twice: {out}"
            );
        }
    }
}

/// A misspelt, unknown or repeated element inside a Create_Entity's `<Data>` (and below) is
/// refused with where it is, and nothing is created: a `<Mas>` used to leave the ball at
/// the default mass, a second `<Radius>` was dropped.
#[test]
fn an_element_a_nested_decoder_does_not_read_creates_nothing() {
    let mut s = session();
    let me = addr("127.0.0.1:4000");
    let ball = |extra: &str| {
        control(&format!(
            "<Control_Request Command=\"Create_Entity\" Type=\"Ball\"><Data><Entity_id>40</Entity_id><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>0.1</Position_Z><Rotation_X>0</Rotation_X><Rotation_Y>0</Rotation_Y><Rotation_Z>0</Rotation_Z><Radius>0.03</Radius>{extra}</Data><Response>true</Response></Control_Request>"
        ))
    };
    for (extra, says) in [
        (
            "<Mas>0.05</Mas>",
            "Create_Entity]/Data: unknown element &lt;Mas&gt;",
        ),
        (
            "<Radius>0.5</Radius>",
            "Create_Entity]/Data: &lt;Radius&gt; given 2 times, read 1",
        ),
        (
            "<Velocity_X>3</Velocity_X>",
            "Create_Entity]/Data: unknown element &lt;Velocity_X&gt;",
        ),
    ] {
        s.handle_datagram(me, ball(extra).as_bytes(), Instant::now());
        let out = texts_to(&drain(&mut s), me);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(out[0].contains(says), "{extra}: {out:?}");
        assert!(
            !s.world().entity_ids().any(|id| id == EntityId(40)),
            "{extra}: created"
        );
    }
    s.handle_datagram(me, ball("<Mass>0.05</Mass>").as_bytes(), Instant::now());
    let out = texts_to(&drain(&mut s), me);
    assert!(out[0].contains("Created Ball entity 40"), "{out:?}");
}

#[test]
fn control_characters_are_never_echoed_as_escapes_and_raw_ones_run_nothing() {
    let mut s = session();
    let me = addr("127.0.0.1:4000");
    let now = Instant::now();
    // A character reference to U+0001: decoded, and shown as U+FFFD, not `\u{1}`.
    let info = "<Message><Agent_Message Command=\"Info_Request\"><Requester>x&#1;y</Requester><Requested>q</Requested></Agent_Message></Message>";
    s.handle_datagram(me, info.as_bytes(), now);
    let out = texts_to(&drain(&mut s), me);
    assert_eq!(
        out,
        vec!["<Response>Error: Info_Request: requester \"x\u{fffd}y\" is not a registered agent</Response>"]
    );
    // A raw U+0001 is not well-formed XML 1.0: nothing runs.
    let before = gravity(&s);
    let raw = control("<Control_Request Command=\"Set_World_Gravity\"><Gravity>-1</Gravity><Response>true</Response></Control_Request><Control_Request Command=\"Save\"><File>a\u{1}b</File></Control_Request>");
    s.handle_datagram(me, raw.as_bytes(), now);
    let out = texts_to(&drain(&mut s), me);
    assert_eq!(gravity(&s), before);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(
        out[0].contains("character U+0001 is not allowed in XML 1.0"),
        "{out:?}"
    );
    assert!(out[0].contains("nothing in it was executed"), "{out:?}");
}

#[test]
fn the_nesting_a_datagram_may_have_is_a_configuration_key() {
    let nested = |depth: usize| {
        // <Message><Simulation_Message><Control_Request …><Gravity>, then more levels in a
        // child the request does not read.
        let extra = depth - 3;
        control(&format!(
            "<Control_Request Command=\"Set_World_Gravity\"><Gravity>-2</Gravity>{}{}</Control_Request>",
            "<X>".repeat(extra),
            "</X>".repeat(extra)
        ))
    };
    let me = addr("127.0.0.1:4000");
    let mut config = ServerConfig::default();
    config.set("maxxmldepth", "6").expect("maxxmldepth");
    let mut s = session_with(config);
    s.handle_datagram(me, nested(7).as_bytes(), Instant::now());
    let out = texts_to(&drain(&mut s), me);
    assert!(
        out[0].contains("elements nested deeper than 6 levels (the SimRob server's configuration key maxxmldepth)"),
        "{out:?}"
    );
    assert!(ServerConfig::default().set("maxxmldepth", "1025").is_err());
    assert!(ServerConfig::default().set("maxxmldepth", "1024").is_ok());
    // The default (128) reads it, down to the unknown <X>.
    let mut s = session();
    s.handle_datagram(me, nested(7).as_bytes(), Instant::now());
    let out = texts_to(&drain(&mut s), me);
    assert!(out[0].contains("unknown element &lt;X&gt;"), "{out:?}");
}
