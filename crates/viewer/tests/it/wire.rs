//! What a page receives, over a real WebSocket on 127.0.0.1: the hello, then the scene once
//! and binary poses for every frame; a new scene only when bodies change; the page's modules.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use simrob_viewer::{
    responses_channel, wire_meta, Backend, Frame, FrameBody, FrameEntity, Viewer, MODULES,
};
use tungstenite::Message;

struct Nothing;

impl Backend for Nothing {
    fn command(&self, _cmd: &serde_json::Value) -> Result<(), simrob_viewer::CommandError> {
        Ok(())
    }
}

fn ball(x: f64) -> Frame {
    Frame {
        iteration: (x * 100.0) as u64,
        initialized: true,
        ..ball_at(8, [x, 0.0, 0.02])
    }
}

/// A frame with one ball, entity `e`, at `p`.
pub(crate) fn ball_at(e: u32, p: [f64; 3]) -> Frame {
    Frame {
        bodies: vec![FrameBody {
            e,
            id: 0,
            shape: "Sphere".into(),
            dims: [0.02, 0.0, 0.0],
            material: 0,
            mass: 0.05,
            p,
            r: [0.0; 3],
            v: [0.0; 3],
            w: [0.0; 3],
        }],
        entities: vec![FrameEntity {
            id: e,
            kind: "Ball".into(),
            p: Some(p),
            r: Some([0.0; 3]),
        }],
        ..Frame::default()
    }
}

fn start() -> Viewer {
    Viewer::start(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(Nothing),
        responses_channel(),
        "wire",
        "live",
    )
    .unwrap()
}

/// The next binary message's meta and length.
fn next_binary(ws: &mut tungstenite::WebSocket<TcpStream>) -> (serde_json::Value, usize) {
    loop {
        match ws.read().expect("a message") {
            Message::Binary(b) => return (wire_meta(&b).expect("a simrob frame"), b.len()),
            Message::Text(t) => panic!("a text message where a frame was due: {t}"),
            _ => continue,
        }
    }
}

#[test]
fn a_page_gets_the_scene_once_then_poses() {
    let viewer = start();
    viewer.publish(&ball(0.1));
    let addr = viewer.addr();
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let (mut ws, _) = tungstenite::client::client(format!("ws://{addr}/ws"), stream).unwrap();
    let Message::Text(hello) = ws.read().unwrap() else {
        panic!("the hello comes first, as text");
    };
    let hello: serde_json::Value = serde_json::from_str(hello.as_str()).unwrap();
    assert_eq!(
        (hello["type"].as_str(), hello["mode"].as_str()),
        (Some("hello"), Some("live"))
    );

    let (scene, _) = next_binary(&mut ws);
    assert_eq!(
        (scene["type"].as_str(), scene["scene"].as_u64()),
        (Some("scene"), Some(1))
    );
    assert_eq!(scene["kinds"], serde_json::json!(["Ball"]));
    let (poses, size) = next_binary(&mut ws);
    assert_eq!(
        (poses["type"].as_str(), poses["scene"].as_u64()),
        (Some("frame"), Some(1))
    );
    assert_eq!(poses["iteration"], 10);
    // Meta, then 13 floats for the body and 6 for the entity.
    let meta_len = serde_json::to_vec(&poses).unwrap().len();
    assert!(size >= 12 + meta_len + 19 * 4 && size < 12 + meta_len + 19 * 4 + 64);

    // The ball moves: poses only.
    viewer.publish(&ball(0.2));
    let (poses, _) = next_binary(&mut ws);
    assert_eq!(
        (poses["type"].as_str(), poses["iteration"].as_u64()),
        (Some("frame"), Some(20))
    );
    // A second ball: a new scene first.
    let mut two = ball(0.3);
    let mut other = two.bodies[0].clone();
    other.e = 9;
    two.bodies.push(other);
    viewer.publish(&two);
    let (scene, _) = next_binary(&mut ws);
    assert_eq!(
        (
            scene["type"].as_str(),
            scene["scene"].as_u64(),
            scene["bodies"].as_u64()
        ),
        (Some("scene"), Some(2), Some(2))
    );
    let (poses, _) = next_binary(&mut ws);
    assert_eq!(
        (poses["scene"].as_u64(), poses["bodies"].as_u64()),
        (Some(2), Some(2))
    );
}

#[test]
fn the_page_and_its_modules_are_served_and_nothing_else() {
    let viewer = start();
    let get = |path: &str| {
        let mut s = TcpStream::connect(viewer.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            viewer.addr()
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text
    };
    let page = get("/");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains(r#"<script type="module" src="main.js">"#));
    for (name, source) in MODULES {
        let reply = get(&format!("/{name}"));
        assert!(reply.starts_with("HTTP/1.1 200"), "{name}: {reply}");
        assert!(
            reply
                .to_ascii_lowercase()
                .contains("content-type: text/javascript"),
            "{name}"
        );
        assert!(source.starts_with("// @ts-check"), "{name} is type-checked");
        // Every module another one imports is served.
        for line in source.lines().filter(|l| l.starts_with("import ")) {
            let file = line
                .rsplit("'./")
                .next()
                .and_then(|f| f.split('\'').next())
                .unwrap();
            assert!(
                MODULES.iter().any(|(n, _)| *n == file),
                "{name} imports {file}, not served"
            );
        }
    }
    // The icon a browser asks for on every page: none, and no error in its console.
    let icon = get("/favicon.ico");
    assert!(icon.starts_with("HTTP/1.1 204"), "{icon}");
    for path in ["/app.js", "/../Cargo.toml", "/secret.js"] {
        let reply = get(path);
        assert!(reply.starts_with("HTTP/1.1 404"), "{path}: {reply}");
    }
}
