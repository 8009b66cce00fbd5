//! The link to the simulator: a `Humanoid_Brain` agent of `simrob serve` that receives its
//! humanoid's proprioception and camera frames and asks for its basic actions.
//!
//! The humanoid runs one action at a time (a new one takes over at the next equilibrium
//! point); the brain sends one body segment at a time and head targets in between, so the
//! link sends the next action only when the previous one is reported `done`,
//! `interrupted` or `fell` (or refused), and keeps only the newest head target.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use simrob_futrob::body::BodyLink;
use simrob_futrob::{Action, BodyStatus, Sighting};
use simrob_protocol::humanoid::decode_brain_broadcast;
use simrob_protocol::{encode_request, CommandKeys, EntityId, EntityRequest, Request};
use simrob_trials::link::{body_report, request_of, sightings, time_ms};

/// What one message from the simulator brought.
pub struct Update {
    /// Simulated time, ms.
    pub now_ms: u64,
    /// A camera frame, when the camera took one.
    pub frame: Option<Vec<Sighting>>,
}

pub struct SimLink {
    sock: UdpSocket,
    server: SocketAddr,
    entity: u32,
    link: BodyLink,
    now_ms: u64,
    buf: Vec<u8>,
    /// When the simulator last sent anything.
    heard: Instant,
}

/// How long a player waits for the simulator, while registering and while playing.
pub struct Patience<'a> {
    /// The longest silence of the simulator (`--server-timeout`); `None`: wait for ever.
    pub silence: Option<Duration>,
    /// The end of the robot's `--wall-duration`, and that duration in seconds.
    pub until: Option<(Instant, f64)>,
    /// Set by Ctrl-C.
    pub stop: &'a AtomicBool,
}

/// The simulator's longest silence in words, with the flag that sets it.
pub fn silence_words(silence: Duration) -> String {
    format!(
        "{} s (--server-timeout)",
        crate::flags::shown(silence.as_secs_f64())
    )
}

fn action_xml(entity: u32, a: &Action) -> String {
    let (name, params) = request_of(a);
    let request = Request::Entity {
        request: EntityRequest::HumanoidAction {
            entity_id: EntityId(entity),
            name: name.to_string(),
            params,
        },
        response: None,
    };
    encode_request(&request, &CommandKeys::default())
}

impl SimLink {
    /// Registers as the brain (`Humanoid_Brain`: FutRob's camera; `Humanoid_Brain_Ideal`: an
    /// exact one) of humanoid `entity` and waits for its first broadcast, asking again every
    /// half second: refused when the simulator says nothing for `patience.silence` or the
    /// robot's `--wall-duration` ends first; `None` when Ctrl-C stopped it.
    pub fn connect(
        server: SocketAddr,
        entity: u32,
        agent_type: &str,
        patience: &Patience,
    ) -> Result<Option<SimLink>> {
        let bind = if server.ip().is_loopback() {
            "127.0.0.1:0"
        } else {
            "0.0.0.0:0"
        };
        let sock = UdpSocket::bind(bind).context("cannot open the simulator socket")?;
        let local = sock.local_addr()?;
        let ip = if server.ip().is_loopback() {
            "127.0.0.1".to_string()
        } else {
            // The address the server can reach us at: the one our route to it uses.
            let probe = UdpSocket::bind("0.0.0.0:0")?;
            probe.connect(server)?;
            probe.local_addr()?.ip().to_string()
        };
        // The server's brain agents are keyed by their humanoid's entity id.
        let reg = format!(
            "<Message><Agent_Message Command=\"Register_Agent\" Agent_Type=\"{agent_type}\"><Port>{}</Port><IP>{ip}</IP><Sync>false</Sync><Broadcast>0</Broadcast><Key>{entity}</Key></Agent_Message></Message>",
            local.port()
        );
        let mut link = SimLink {
            sock,
            server,
            entity,
            link: BodyLink::default(),
            now_ms: 0,
            buf: vec![0u8; 65_536],
            heard: Instant::now(),
        };
        let start = Instant::now();
        let silent_until = patience.silence.map(|d| start + d);
        let mut next_ask = start;
        loop {
            if patience.stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let now = Instant::now();
            if silent_until.is_some_and(|t| now >= t) {
                let words = silence_words(patience.silence.unwrap_or_default());
                bail!(
                    "no answer from the simulator at {server} within {words}: is `simrob serve` \
                     running there, and does its humanoid {entity} exist?"
                );
            }
            if let Some((_, seconds)) = patience.until.filter(|(end, _)| now >= *end) {
                bail!(
                    "no answer from the simulator at {server} within the robot's \
                     --wall-duration of {} s",
                    crate::flags::shown(seconds)
                );
            }
            if now >= next_ask {
                link.sock.send_to(reg.as_bytes(), server)?;
                next_ask = now + Duration::from_millis(500);
            }
            // Wake up for the next question, the deadlines and Ctrl-C.
            let mut wake = next_ask.min(now + Duration::from_millis(100));
            if let Some(t) = silent_until {
                wake = wake.min(t);
            }
            if let Some((end, _)) = patience.until {
                wake = wake.min(end);
            }
            link.sock.set_read_timeout(Some(
                wake.saturating_duration_since(now)
                    .max(Duration::from_millis(1)),
            ))?;
            let Ok((n, from)) = link.sock.recv_from(&mut link.buf) else {
                continue;
            };
            if from != server {
                continue;
            }
            let text = String::from_utf8_lossy(&link.buf[..n]).into_owned();
            if text.contains("<Broadcast>") {
                link.heard = Instant::now();
                return Ok(Some(link));
            }
            if text.contains("Error") {
                bail!(
                    "the simulator at {server} refused the brain of entity {entity}: {}",
                    text.trim()
                );
            }
        }
    }

    /// How long the simulator has sent nothing.
    pub fn silent_for(&self) -> Duration {
        self.heard.elapsed()
    }

    /// The simulator's address.
    pub fn server(&self) -> SocketAddr {
        self.server
    }

    /// The body's latest status.
    pub fn status(&self) -> BodyStatus {
        self.link.status()
    }

    /// Requests the simulator refused.
    pub fn refused(&self) -> u64 {
        self.link.refused_count()
    }

    /// Queues the brain's commands and sends what the body is free for.
    pub fn command(&mut self, cmds: &[Action]) -> Result<()> {
        self.link.command(cmds);
        self.pump()
    }

    fn pump(&mut self) -> Result<()> {
        if let Some(a) = self.link.poll_request(self.now_ms) {
            tracing::debug!(target: "futrob::motors", entity = self.entity, action = %a, "request");
            self.sock
                .send_to(action_xml(self.entity, &a).as_bytes(), self.server)?;
        }
        Ok(())
    }

    /// Waits up to `timeout` for the next message from the simulator.
    pub fn poll(&mut self, timeout: Duration) -> Result<Option<Update>> {
        self.sock
            .set_read_timeout(Some(timeout.max(Duration::from_millis(1))))?;
        let n = match self.sock.recv_from(&mut self.buf) {
            Ok((n, from)) if from == self.server => {
                self.heard = Instant::now();
                n
            }
            Ok(_) => return Ok(None),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                return Ok(None)
            }
            Err(e) => return Err(e.into()),
        };
        let data = &self.buf[..n];
        let update = match decode_brain_broadcast(data) {
            Ok(b) => {
                self.now_ms = time_ms(&b);
                self.link.report(self.now_ms, &body_report(&b));
                Some(Update {
                    now_ms: self.now_ms,
                    frame: sightings(&b),
                })
            }
            Err(_) => {
                let text = String::from_utf8_lossy(data);
                if text.contains("Error") {
                    tracing::debug!(target: "futrob::motors", entity = self.entity, response = %text.trim(), "refused");
                    // A refused request will never run: the next one may go.
                    self.link.refused();
                }
                None
            }
        };
        self.pump()?;
        Ok(update)
    }
}
