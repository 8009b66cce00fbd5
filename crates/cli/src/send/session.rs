//! The commander's conversation with a server: send one request, wait for its answer.
//!
//! How an answer is recognised (as the SimRob manual describes responses):
//! - an error (`<Response>Error: …</Response>`) is sent to the sender only, so any error
//!   that arrives while waiting is the answer;
//! - a confirmation reads `Command: text` and goes to every registered agent and to an
//!   unregistered sender; the first one naming the command sent is the answer (a registered
//!   commander also receives the confirmations of other agents' commands: those are the
//!   log, not the answer);
//! - Register_Agent is confirmed with `Sucessfully added agent with key K, …` to registered
//!   agents only; Info_Request is answered with `<Agent_Information>` to the requester only;
//!   Synchronize is never confirmed; Unregister_Agent (a simrob extension) is confirmed with
//!   `Removed agent with key K, …`. When no answer but an error can come, silence until the
//!   timeout means the request was accepted.
//!
//! A commander that registered itself unregisters when it stops (the session is dropped:
//! the command is done, `quit`, the end of the input, Ctrl-C), so that the server no longer
//! sends to its closed port.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use simrob_client::agent::{Agent, ClientError};
use simrob_protocol::{AgentRequest, CommandKeys, Request, Response, ServerMessage};

/// The answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The server confirmed it (the response text).
    Confirmed(String),
    /// Nothing came back but nothing could, except an error: the request stands.
    Accepted(String),
    /// The server refused it (the response text, `Error: …`).
    Refused(String),
    /// No answer within the timeout.
    Silent(String),
}

/// What answer a request can get.
#[derive(Debug, Clone, PartialEq)]
enum Expect {
    /// A confirmation `Command: …`.
    Confirmation(String),
    /// A registration confirmation for this key.
    Registered(String),
    /// A confirmation that the agent with this key was removed.
    Unregistered(String),
    /// `<Agent_Information>`.
    AgentInfo,
    /// Only an error can come back.
    ErrorsOnly,
}

/// A commander connected to one server.
pub struct Session {
    agent: Agent,
    keys: CommandKeys,
    timeout: Duration,
    local: SocketAddr,
    registered: Option<String>,
}

/// How a message from the server is shown: its text, and whether it is an error.
pub fn describe(message: &ServerMessage) -> (String, bool) {
    match message {
        ServerMessage::Response(Response::Text(t)) => (t.clone(), t.starts_with("Error: ")),
        ServerMessage::Response(Response::AgentInformation { key, port, ip }) => (
            format!("Agent_Information: key {key}, ip {ip}, port {port}"),
            false,
        ),
        ServerMessage::Broadcast(b) => (
            format!(
                "Broadcast: iteration {}, {} bodies, {} entities{}",
                b.iteration,
                b.bodies.len(),
                b.entities.len(),
                match b.part {
                    Some((i, n)) => format!(" (part {i} of {n})"),
                    None => String::new(),
                }
            ),
            false,
        ),
    }
}

impl Session {
    /// A socket towards `server` (nothing is sent yet).
    pub fn connect(server: SocketAddr, keys: CommandKeys, timeout: Duration) -> Result<Session> {
        let agent = Agent::connect(server)
            .with_context(|| format!("cannot open a UDP socket towards {server}"))?
            .with_keys(keys.clone());
        let local = agent
            .local_addr()
            .context("cannot find the commander's own address")?;
        Ok(Session {
            agent,
            keys,
            timeout,
            local,
            registered: None,
        })
    }

    pub fn server(&self) -> SocketAddr {
        self.agent.server()
    }
    pub fn local(&self) -> SocketAddr {
        self.local
    }
    pub fn keys(&self) -> &CommandKeys {
        &self.keys
    }
    pub fn timeout(&self) -> Duration {
        self.timeout
    }
    /// The key the commander is registered under, once a registration was confirmed.
    pub fn registered(&self) -> Option<&str> {
        self.registered.as_deref()
    }

    fn expectation(&self, request: &Request) -> Expect {
        match request {
            Request::Agent(AgentRequest::RegisterAgent { key, ip, port, .. }) => {
                let own = *port == self.local.port()
                    && ip.trim().parse::<std::net::IpAddr>().ok() == Some(self.local.ip());
                if own || self.registered.is_some() {
                    Expect::Registered(key.clone())
                } else {
                    Expect::ErrorsOnly
                }
            }
            Request::Agent(AgentRequest::InfoRequest { requester, .. }) => {
                if self.registered.as_deref() == Some(requester.as_str()) {
                    Expect::AgentInfo
                } else {
                    Expect::ErrorsOnly
                }
            }
            Request::Agent(AgentRequest::Synchronize { .. }) => Expect::ErrorsOnly,
            Request::Agent(AgentRequest::UnregisterAgent { key }) => {
                Expect::Unregistered(key.clone())
            }
            other => Expect::Confirmation(other.command(&self.keys).to_string()),
        }
    }

    /// Sends `request` and waits for its answer. Everything else that arrives meanwhile
    /// (other agents' confirmations, broadcasts) goes to `log`.
    pub fn exchange(
        &mut self,
        request: &Request,
        log: &mut dyn FnMut(&ServerMessage),
    ) -> Result<Answer> {
        let command = request.command(&self.keys).to_string();
        let expect = self.expectation(request);
        self.agent
            .send(request)
            .with_context(|| format!("cannot send {command} to {}", self.server()))?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(message) = self.recv(left)? else {
                return Ok(match expect {
                    Expect::ErrorsOnly => Answer::Accepted(format!(
                        "{command}: sent (the server answers it only with an error, and none came)"
                    )),
                    _ => Answer::Silent(command),
                });
            };
            match (&expect, &message) {
                (_, ServerMessage::Response(Response::Text(t))) if t.starts_with("Error: ") => {
                    return Ok(Answer::Refused(t.clone()));
                }
                (Expect::Confirmation(c), ServerMessage::Response(Response::Text(t)))
                    if t.strip_prefix(c.as_str())
                        .is_some_and(|rest| rest.starts_with(": ")) =>
                {
                    return Ok(Answer::Confirmed(t.clone()));
                }
                (Expect::Registered(key), ServerMessage::Response(Response::Text(t)))
                    if t.starts_with("Sucessfully added agent with key ")
                        && t.contains(&format!("key {key}, ")) =>
                {
                    if let Request::Agent(AgentRequest::RegisterAgent { port, ip, .. }) = request {
                        let own = *port == self.local.port()
                            && ip.trim().parse::<std::net::IpAddr>().ok() == Some(self.local.ip());
                        if own {
                            self.registered = Some(key.clone());
                        }
                    }
                    return Ok(Answer::Confirmed(t.clone()));
                }
                (Expect::Unregistered(key), ServerMessage::Response(Response::Text(t)))
                    if t.starts_with(&format!("Removed agent with key {key}, ")) =>
                {
                    if self.registered.as_deref() == Some(key.as_str()) {
                        self.registered = None;
                    }
                    return Ok(Answer::Confirmed(t.clone()));
                }
                (Expect::AgentInfo, ServerMessage::Response(Response::AgentInformation { .. })) => {
                    return Ok(Answer::Confirmed(describe(&message).0));
                }
                _ => log(&message),
            }
        }
    }

    /// Sends bytes as one datagram, as they are.
    pub fn send_raw(&self, datagram: &[u8]) -> Result<()> {
        self.agent
            .send_raw(datagram)
            .with_context(|| format!("cannot send to {}", self.server()))
    }

    /// The next message from the server within `timeout` (`None`: none came).
    pub fn recv(&mut self, timeout: Duration) -> Result<Option<ServerMessage>> {
        match self.agent.recv(timeout) {
            Ok(m) => Ok(m),
            // Some systems report an unreachable port on the next receive: nobody listens.
            Err(ClientError::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                std::thread::sleep(timeout);
                Ok(None)
            }
            Err(e) => Err(anyhow::Error::new(e).context("receiving from the server")),
        }
    }
}

impl Drop for Session {
    /// A commander registered under a key unregisters when it stops (without waiting for
    /// the confirmation).
    fn drop(&mut self) {
        if let Some(key) = self.registered.take() {
            let _ = self
                .agent
                .send(&Request::Agent(AgentRequest::UnregisterAgent { key }));
        }
    }
}
