//! The Mobile Robot Simulator over real TCP sockets on 127.0.0.1: every seed exchange with its
//! exact reply, bumpers and walls, several clients, malformed input, extensions.

use crate::common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::Conn;

use simrob_mrs::flat::{FlatPose, Map};
use simrob_mrs::{
    DirMapFiles, MapFiles, MrsConfig, MrsCore, MrsHandle, MrsServer, NoFiles, ShellOptions,
    EXAMPLE_MAP,
};

fn serve(map: Map, start: FlatPose, stepped: bool, files: Box<dyn MapFiles + Send>) -> MrsHandle {
    let core = MrsCore::new(
        map,
        MrsConfig {
            start: Some(start),
            stepped,
            ..MrsConfig::default()
        },
    );
    let options = ShellOptions {
        speed: 20.0,
        ..ShellOptions::default()
    };
    MrsServer::bind("127.0.0.1:0", core, files, options)
        .expect("bind")
        .spawn()
        .expect("spawn")
}

fn example() -> Map {
    Map::parse_vector(EXAMPLE_MAP).expect("example")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("simrob-mrs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[test]
fn every_seed_exchange_returns_the_exact_reply() {
    let h = serve(
        example(),
        FlatPose::new(150.0, 130.0, 0.0),
        true,
        Box::new(NoFiles),
    );
    let mut c = Conn::open(h.addr());
    // Sonars against hand-computed distances (see simrob-flat's tests): up 27 - 10 = 17,
    // 45° down-right 50√2 - 10 = 60.7, 135° 45√2 - 10 = 53.6, right 138 → 110.
    assert_eq!(c.ask("S12"), "S12017");
    assert_eq!(c.ask("S02"), "S02061");
    assert_eq!(c.ask("S06"), "S06054");
    assert_eq!(c.ask("S00"), "S00110");
    assert_eq!(c.ask("B"), "B0");
    assert_eq!(c.ask("R"), "R-1");
    assert_eq!(c.ask("P"), "P015000130000000");
    assert_eq!(c.ask("MHello world!"), "M");
    assert_eq!(c.ask("M"), "M");
    // 10 in/s forward, turning left at 30°/s for one second: the heading goes to 330°.
    assert_eq!(c.ask("V+100-300"), "V");
    assert_eq!(c.ask("#STEP 100"), "#STEP 1.00");
    let p = c.ask("P");
    assert!(p.starts_with('P') && p.len() == 16, "{p}");
    assert_eq!(&p[11..], "03300");
    assert_eq!(c.ask("A"), "A");
    let before = c.ask("P");
    assert_eq!(c.ask("#STEP 50"), "#STEP 1.50");
    assert_eq!(c.ask("P"), before, "stopped robots stay put");
    // \r\n framing works too.
    c.send_raw(b"B\r\n");
    assert_eq!(c.read(), "B0");
    // Extensions.
    assert_eq!(
        c.ask("#SONARS").split_whitespace().count(),
        17,
        "#SONARS and 16 readings"
    );
    assert_eq!(c.ask("#BUMPERS"), "#BUMPERS 00000000000000000000");
    assert!(c.ask("#HELP").starts_with("#HELP V"));
    let core = h.stop().expect("stop");
    assert_eq!(
        core.messages().values().next().map(String::as_str),
        Some("")
    );
}

#[test]
fn bumpers_close_on_contact_and_walls_hold_at_full_speed() {
    let h = serve(
        example(),
        FlatPose::new(150.0, 130.0, 270.0),
        true,
        Box::new(NoFiles),
    );
    let mut c = Conn::open(h.addr());
    // Full speed (99.9 in/s) up into the wall 50 98 250 103 (face y = 103).
    assert_eq!(c.ask("V+999+000"), "V");
    assert_eq!(c.ask("#STEP 300"), "#STEP 3.00");
    assert_eq!(c.ask("B"), "B1");
    assert_eq!(c.ask("R"), "R00");
    assert_eq!(c.ask("P"), "P015000113002700");
    assert_eq!(c.ask("S00"), "S00005");
    assert_eq!(c.ask("#BUMPERS"), "#BUMPERS 10000000000000000000");
    // Turning on the spot against the wall moves the contact round the ring: after 90°
    // clockwise the wall is on the left, at bumper 15.
    assert_eq!(c.ask("V+000+900"), "V");
    assert_eq!(c.ask("#STEP 100"), "#STEP 4.00");
    assert_eq!(c.ask("R"), "R15");
    // Backing off (heading 0 now: straight down is to the right… go backwards = left) —
    // turn to face down and drive away: the bumper opens.
    assert_eq!(c.ask("V+000+900"), "V");
    assert_eq!(c.ask("#STEP 100"), "#STEP 5.00");
    assert_eq!(c.ask("V+200+000"), "V");
    assert_eq!(c.ask("#STEP 50"), "#STEP 5.50");
    assert_eq!(c.ask("B"), "B0");
    assert_eq!(c.ask("R"), "R-1");
    // A corner closes two bumpers; R answers the lowest.
    assert_eq!(c.ask("#PLACE 40 40 225"), "#PLACE");
    assert_eq!(c.ask("V+500+000"), "V");
    assert_eq!(c.ask("#STEP 200"), "#STEP 7.50");
    assert_eq!(c.ask("#BUMPERS"), "#BUMPERS 00010000000000000010");
    assert_eq!(c.ask("R"), "R03");
    h.stop().expect("stop");
}

#[test]
fn bitmap_maps_read_the_same() {
    let bmp = Map::from_bmp(include_bytes!("../../../../maps/example.bmp")).expect("bmp");
    let h = serve(
        bmp,
        FlatPose::new(150.0, 130.0, 0.0),
        true,
        Box::new(NoFiles),
    );
    let mut c = Conn::open(h.addr());
    assert_eq!(c.ask("S12"), "S12017");
    assert_eq!(c.ask("S02"), "S02061");
    assert_eq!(c.ask("S06"), "S06054");
    h.stop().expect("stop");
}

#[test]
fn malformed_input_is_answered_and_survived() {
    let h = serve(
        example(),
        FlatPose::new(150.0, 130.0, 0.0),
        true,
        Box::new(NoFiles),
    );
    let mut c = Conn::open(h.addr());
    for bad in [
        "V+10-300",
        "V+100+3000",
        "V100-300",
        "Vabcdefgh",
        "S16",
        "S1",
        "S-1",
        "A1",
        "B0",
        "Rxx",
        "P1",
        "x",
        "v+100+000",
        "#FOO",
        "#STEP 0",
        "#STEP x",
        "#PLACE 1 2",
        "#LOAD x",
        "#PLACE 5 5 0",
        " P",
    ] {
        let r = c.ask(bad);
        assert!(r.starts_with("E "), "{bad:?} → {r:?}");
    }
    // Stepping a real-time server, reading files without a directory: refused, explained.
    assert!(c.ask("#SNAPSHOT x.png").contains("no map directory"));
    // Bytes that are not UTF-8.
    c.send_raw(b"M\xff\xfe\n");
    assert!(c.read().starts_with("E "));
    // A huge line.
    let mut long = vec![b'M'; 100_000];
    long.push(b'\n');
    c.send_raw(&long);
    assert!(c.read().contains("too long"));
    // Blank lines get no reply; the next request does.
    c.send_raw(b"\n\r\n");
    assert_eq!(c.ask("P"), "P015000130000000", "nothing changed");
    let core = h.stop().expect("stop");
    let (requests, errors) = core.counts();
    assert!(errors >= 20 && requests > errors, "{requests} {errors}");
}

#[test]
fn several_clients_drive_several_robots() {
    let h = serve(
        example(),
        FlatPose::new(150.0, 130.0, 0.0),
        true,
        Box::new(NoFiles),
    );
    let mut conns = Vec::new();
    let mut poses = Vec::new();
    for _ in 0..4 {
        let mut c = Conn::open(h.addr());
        poses.push(c.ask("P"));
        conns.push(c);
    }
    // The first robot has the start; the others the nearest free spots: all different.
    assert_eq!(poses[0], "P015000130000000");
    for i in 0..poses.len() {
        for j in 0..i {
            assert_ne!(poses[i], poses[j]);
        }
    }
    // Each sees the others with its sonars; drive them apart in different directions
    // concurrently from threads.
    let threads: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(k, mut c)| {
            std::thread::spawn(move || {
                let turn = [0, 900, -900, 450][k];
                assert_eq!(c.ask(&format!("V+100{turn:+04}")), "V");
                for _ in 0..20 {
                    assert!(c.ask("S00").starts_with("S00"));
                    assert!(c.ask("P").starts_with('P'));
                }
                c
            })
        })
        .collect();
    let mut conns: Vec<Conn> = threads
        .into_iter()
        .map(|t| t.join().expect("thread"))
        .collect();
    assert!(conns[0].ask("#STEP 100").starts_with("#STEP"));
    let after: Vec<String> = conns.iter_mut().map(|c| c.ask("P")).collect();
    for (a, b) in after.iter().zip(&poses) {
        assert_ne!(a, b, "every robot moved");
    }
    drop(conns);
    h.stop().expect("stop");
}

#[test]
fn disconnecting_removes_the_robot() {
    let (h, robots) = common::serve_counting_robots(example(), FlatPose::new(150.0, 130.0, 0.0));
    let mut a = Conn::open(h.addr());
    assert_eq!(a.ask("P"), "P015000130000000");
    let mut b = Conn::open(h.addr());
    assert_ne!(b.ask("P"), "P015000130000000");
    common::wait_for_robots(&robots, 2);
    drop(a);
    // The server reports the robot of the closed connection gone: the start is free again.
    common::wait_for_robots(&robots, 1);
    let mut c = Conn::open(h.addr());
    assert_eq!(
        c.ask("P"),
        "P015000130000000",
        "a new client gets the start"
    );
    assert!(b.ask("B").starts_with('B'));
    assert!(c.ask("B").starts_with('B'));
    let core = h.stop().expect("stop");
    assert_eq!(core.world().robot_count(), 2, "b and c");
}

#[test]
fn maps_load_merge_and_snapshot_through_the_map_directory() {
    let dir = temp_dir("files");
    std::fs::write(
        dir.join("example.bmp"),
        include_bytes!("../../../../maps/example.bmp"),
    )
    .expect("copy");
    std::fs::write(dir.join("box.txt"), "300 300\n180 120 190 140\n").expect("box");
    // A snapshot a killed server was writing: removed when the directory is opened.
    std::fs::write(dir.join(".simrob-tmp-1-2"), "half a snapshot").expect("stale");
    let files = DirMapFiles::new(&dir).expect("files");
    assert!(!dir.join(".simrob-tmp-1-2").exists());
    let h = serve(
        example(),
        FlatPose::new(150.0, 130.0, 0.0),
        true,
        Box::new(files),
    );
    let mut c = Conn::open(h.addr());
    assert_eq!(c.ask("S00"), "S00110");
    assert_eq!(c.ask("#MERGE box.txt"), "#MERGE");
    assert_eq!(c.ask("S00"), "S00020");
    assert_eq!(c.ask("#LOAD example.bmp"), "#LOAD");
    assert_eq!(c.ask("S00"), "S00110", "the box is gone with the old map");
    assert_eq!(c.ask("S12"), "S12017");
    assert_eq!(c.ask("#RECT 140 110 160 112"), "#RECT");
    assert_eq!(c.ask("S12"), "S12008");
    assert!(c.ask("#MERGE example.bmp").contains("only vector maps"));
    assert!(c.ask("#LOAD ../etc/passwd").starts_with("E "));
    assert!(c.ask("#LOAD /etc/passwd").starts_with("E "));
    assert!(c.ask("#LOAD missing.txt").starts_with("E "));
    assert_eq!(c.ask("#SNAPSHOT shot.png"), "#SNAPSHOT");
    let png = std::fs::read(dir.join("shot.png")).expect("snapshot written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["box.txt", "example.bmp", "shot.png"],
        "no temporary file is left"
    );
    h.stop().expect("stop");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn real_time_mode_moves_robots_and_refuses_step() {
    let h = serve(
        example(),
        FlatPose::new(150.0, 130.0, 0.0),
        false,
        Box::new(NoFiles),
    );
    let mut c = Conn::open(h.addr());
    assert!(c.ask("#STEP 1").contains("stepped"));
    let start = c.ask("P");
    assert_eq!(c.ask("V+200+000"), "V");
    let deadline = Instant::now() + Duration::from_secs(10);
    // Real time moves it: ask until it has (each answer is a round trip to the server).
    while c.ask("P") == start {
        assert!(Instant::now() < deadline, "the robot never moved");
    }
    h.stop().expect("stop");
}

#[test]
fn the_core_without_sockets() {
    use simrob_mrs::ClientId;
    let mut core = MrsCore::new(example(), MrsConfig::default());
    let a = ClientId(1);
    core.connect(a).expect("room");
    let mut nf = NoFiles;
    assert_eq!(
        core.handle_line(a, "P\n", &mut nf).as_deref(),
        Some("P015000150000000")
    );
    assert_eq!(core.handle_line(a, "\n", &mut nf), None);
    assert!(core
        .handle_line(ClientId(9), "P", &mut nf)
        .is_some_and(|r| r.starts_with("E ")));
    core.disconnect(a);
    assert_eq!(core.world().robot_count(), 0);
}
