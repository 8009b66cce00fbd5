//! What the viewer's HTTP server accepts: pages of its own origin only, request heads within
//! a time (one request a connection), WebSocket messages within a size, connections that
//! answer pings and read what they are sent, a bounded number of pages open at once, and a
//! bounded rate of page commands (a command past it is refused, and the page told).
//!
//! Any web page the user visits can open a WebSocket to `127.0.0.1`: the browser sends that
//! page's `Origin`, and the viewer refuses every origin but its own (`http://HOST` of the
//! request). Programs that are not browsers send no `Origin` and are let in. A page whose
//! name was made to resolve to the viewer's address (DNS rebinding) sends its own name as
//! both `Host` and `Origin`, so a browser's request is also refused unless its `Host` names
//! the viewer as a user reaches it ([`host_allowed`]): an IP address, `localhost` (or a name
//! under `.localhost`), or a name listed in [`HOSTS_VAR`].

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

/// The viewer's limits (defined with the server's configuration, whose `viewer…` keys set
/// them; the `--viewer-…` flags check the same ranges: [`simrob_session::VIEWER_KEYS`]).
pub use simrob_session::ViewerGuard as Guard;

/// The environment variable that lists further names a browser may reach the viewer by
/// (comma-separated, e.g. `SIMROB_VIEWER_HOSTS=lab-pc.local,viewer.example.org` for a viewer
/// served on another address than 127.0.0.1 with `--gui=IP:PORT`).
pub const HOSTS_VAR: &str = "SIMROB_VIEWER_HOSTS";

/// The names [`HOSTS_VAR`] lists, lower case, read once.
fn listed_hosts() -> &'static [String] {
    static HOSTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    HOSTS.get_or_init(|| {
        std::env::var(HOSTS_VAR)
            .unwrap_or_default()
            .split(',')
            .map(|h| h.trim().trim_end_matches('.').to_ascii_lowercase())
            .filter(|h| !h.is_empty())
            .collect()
    })
}

/// Whether a request's `Host` header (`NAME[:PORT]`, `[IPv6][:PORT]`) names the viewer as a
/// user reaches it: an IP address (a browser that was given the address itself), `localhost`
/// or a name under `.localhost` (browsers take them to the loopback address), or one of
/// `listed` (lower case). Any other name may be a foreign page's, made to resolve to the
/// viewer's address (DNS rebinding).
pub fn host_allowed(host: &str, listed: &[String]) -> bool {
    let host = host.trim().to_ascii_lowercase();
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((ip, port)) if port.is_empty() || port.strip_prefix(':').is_some() => ip,
            _ => return false,
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if !name.contains(':') && port.parse::<u16>().is_ok() => name,
            Some(_) => return false,
            None => host.as_str(),
        }
    };
    let name = name.trim_end_matches('.');
    name.parse::<std::net::IpAddr>().is_ok()
        || name == "localhost"
        || name.ends_with(".localhost")
        || listed.iter().any(|h| h == name)
}

/// Whether a WebSocket upgrade with these headers comes from the viewer's own page (or from
/// a program that is not a browser): no `Origin`, or an `Origin` that is `http://HOST` of
/// the request with a `HOST` that names the viewer ([`host_allowed`], with the names of
/// [`HOSTS_VAR`]).
pub fn origin_allowed(headers: &HeaderMap) -> bool {
    origin_allowed_with(headers, listed_hosts())
}

fn origin_allowed_with(headers: &HeaderMap, listed: &[String]) -> bool {
    let Some(origin) = headers.get("origin") else {
        return true;
    };
    let (Ok(origin), Some(Ok(host))) = (origin.to_str(), headers.get("host").map(|h| h.to_str()))
    else {
        return false;
    };
    let origin = origin.trim().to_ascii_lowercase();
    let host = host.trim().to_ascii_lowercase();
    (origin == format!("http://{host}") || origin == format!("https://{host}"))
        && host_allowed(&host, listed)
}

/// The pages a view has open (shared by its connections).
#[derive(Clone, Debug, Default)]
pub(crate) struct OpenPages(Arc<AtomicUsize>);

/// One open page's place among [`OpenPages`], given back when dropped.
pub(crate) struct PageSlot(Arc<AtomicUsize>);

impl OpenPages {
    /// A place for one more page, unless `max` are open.
    fn enter(&self, max: usize) -> Option<PageSlot> {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| PageSlot(self.0.clone()))
    }
}

impl Drop for PageSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Upgrades a page's request to a WebSocket within `guard`: refused (403) unless it comes from
/// the viewer's own page ([`origin_allowed`]), and (503) while [`Guard::max_pages`] pages are
/// open (`open` counts them); messages and frames at most [`Guard::max_message`]; `serve`
/// runs the connection.
pub(crate) fn upgrade<F, Fut>(
    upgrade: axum::extract::ws::WebSocketUpgrade,
    headers: &HeaderMap,
    guard: Guard,
    open: &OpenPages,
    serve: F,
) -> axum::response::Response
where
    F: FnOnce(axum::extract::ws::WebSocket) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    use axum::response::IntoResponse;
    if !origin_allowed(headers) {
        return (
            axum::http::StatusCode::FORBIDDEN,
            "the viewer only talks to its own page",
        )
            .into_response();
    }
    let Some(slot) = open.enter(guard.max_pages) else {
        return (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            pages_full_text(guard.max_pages),
        )
            .into_response();
    };
    upgrade
        .max_message_size(guard.max_message)
        .max_frame_size(guard.max_message)
        .on_upgrade(move |socket| async move {
            let _slot = slot;
            serve(socket).await
        })
}

/// Marks every HTTP answer but a WebSocket's `101` `Connection: close`: the server closes the
/// connection once it is sent, so each request comes on a connection of its own and its head
/// is held to [`Guard::header_timeout`] and [`Guard::max_pending`] like the first. Kept open,
/// a connection was past the guard after its first request: 60 connections that each loaded
/// a file, then sent a byte of their next request head a second, were all still open 25 s on
/// (an idle one for ever, and without any bound on their number).
pub(crate) async fn one_request(
    mut response: axum::response::Response,
) -> axum::response::Response {
    if response.status() != axum::http::StatusCode::SWITCHING_PROTOCOLS {
        response.headers_mut().insert(
            axum::http::header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
    }
    response
}

/// Sends `message` to a page, waiting at most `within` for it to go out. False: the page is
/// gone, or has read nothing for that long (a page that never reads fills the socket's
/// buffers, and a send then waits for ever: its connection held its place among
/// [`Guard::max_pages`] for good, pings unsent, as the idle timeout was never checked).
pub(crate) async fn send(
    socket: &mut axum::extract::ws::WebSocket,
    message: axum::extract::ws::Message,
    within: Duration,
) -> bool {
    matches!(
        tokio::time::timeout(within, socket.send(message)).await,
        Ok(Ok(()))
    )
}

/// A token bucket: how many page commands may pass now.
#[derive(Debug, Clone)]
pub struct CommandBudget {
    rate: f64,
    tokens: f64,
    at: Instant,
}

impl CommandBudget {
    /// Full, `rate` a second, bursts of `2 × rate`.
    pub fn new(rate: f64, now: Instant) -> Self {
        CommandBudget {
            rate,
            tokens: 2.0 * rate,
            at: now,
        }
    }

    /// Whether one more command may pass at `now` (and takes it).
    pub fn take(&mut self, now: Instant) -> bool {
        let dt = now.saturating_duration_since(self.at).as_secs_f64();
        self.at = now;
        self.tokens = (self.tokens + dt * self.rate).min(2.0 * self.rate);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// A listener that hands a connection to the HTTP server only once its request head has
/// arrived (within [`Guard::header_timeout`]); slow or silent connections are closed.
pub struct GuardedListener {
    incoming: mpsc::Receiver<(TcpStream, SocketAddr)>,
    addr: SocketAddr,
}

impl GuardedListener {
    /// Starts accepting on `listener` (on the current tokio runtime). When
    /// [`Guard::max_pending`] connections already wait for their request head, the one that
    /// has waited longest is closed to make room: silent or slow connections never keep a
    /// newcomer out (a browser sends its head at once, so it is never the oldest for long).
    pub fn new(listener: TcpListener, guard: Guard) -> std::io::Result<Self> {
        let addr = listener.local_addr()?;
        let (tx, incoming) = mpsc::channel(guard.max_pending.max(1));
        // The connections waiting for their head, oldest first: a flag that closes each.
        let pending: Arc<Mutex<BTreeMap<u64, oneshot::Sender<()>>>> = Arc::default();
        tokio::spawn(async move {
            let mut next = 0u64;
            loop {
                let (stream, peer) = match listener.accept().await {
                    Ok(c) => c,
                    Err(e) => {
                        tracing::debug!("viewer: accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                };
                let id = next;
                next += 1;
                let (close, closed) = oneshot::channel();
                {
                    let Ok(mut waiting) = pending.lock() else {
                        return;
                    };
                    while waiting.len() >= guard.max_pending.max(1) {
                        // Dropping the sender wakes the oldest waiting connection: it closes.
                        if waiting.pop_first().is_none() {
                            break;
                        }
                    }
                    waiting.insert(id, close);
                }
                let tx = tx.clone();
                let pending = pending.clone();
                tokio::spawn(async move {
                    let ready = tokio::select! {
                        r = tokio::time::timeout(guard.header_timeout, head_arrived(&stream)) => {
                            matches!(r, Ok(true))
                        }
                        _ = closed => false,
                    };
                    if let Ok(mut waiting) = pending.lock() {
                        waiting.remove(&id);
                    }
                    if ready {
                        let _ = tx.send((stream, peer)).await;
                    }
                });
            }
        });
        Ok(GuardedListener { incoming, addr })
    }
}

/// Waits until the stream holds a whole request head (`\r\n\r\n`) or 16 KiB; false when the
/// peer closed or sent nothing usable.
async fn head_arrived(stream: &TcpStream) -> bool {
    let mut buf = vec![0u8; 16 << 10];
    loop {
        if stream.readable().await.is_err() {
            return false;
        }
        match stream.peek(&mut buf).await {
            Ok(0) => return false,
            Ok(n) if n == buf.len() => return true,
            Ok(n) if buf[..n].windows(4).any(|w| w == b"\r\n\r\n") => return true,
            Ok(_) => {
                // Not yet: wait for more bytes (peek does not consume, so wait a little).
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Err(_) => return false,
        }
    }
}

impl axum::serve::Listener for GuardedListener {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            if let Some(c) = self.incoming.recv().await {
                return c;
            }
            // The accepting task ended (runtime shutting down): wait to be dropped.
            std::future::pending::<()>().await;
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}

/// The text of the HTTP 503 that refuses a page past `--viewer-max-pages` (`max_pages`).
fn pages_full_text(max_pages: usize) -> String {
    format!(
        "the viewer already has {max_pages} {} open, the most it serves (--viewer-max-pages \
         {max_pages}, configuration key viewermaxpages): close one",
        if max_pages == 1 { "page" } else { "pages" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_page_open_is_said_in_the_singular() {
        assert!(pages_full_text(1).starts_with("the viewer already has 1 page open,"));
        assert!(pages_full_text(64).starts_with("the viewer already has 64 pages open,"));
    }

    fn headers(origin: Option<&str>, host: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("host", host.parse().unwrap());
        if let Some(o) = origin {
            h.insert("origin", o.parse().unwrap());
        }
        h
    }

    #[test]
    fn only_the_viewers_own_origin_is_let_in() {
        assert!(origin_allowed(&headers(
            Some("http://127.0.0.1:8080"),
            "127.0.0.1:8080"
        )));
        assert!(origin_allowed(&headers(None, "127.0.0.1:8080")));
        assert!(!origin_allowed(&headers(
            Some("http://evil.example"),
            "127.0.0.1:8080"
        )));
        assert!(!origin_allowed(&headers(Some("null"), "127.0.0.1:8080")));
        assert!(!origin_allowed(&headers(
            Some("http://127.0.0.1:9999"),
            "127.0.0.1:8080"
        )));
    }

    #[test]
    fn a_page_of_a_name_rebound_to_the_viewer_is_refused() {
        let allowed = |host: &str, listed: &[String]| {
            origin_allowed_with(&headers(Some(&format!("http://{host}")), host), listed)
        };
        let none: &[String] = &[];
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LocalHost:8080",
            "viewer.localhost:8080",
            "[::1]:8080",
            "192.168.1.20:8080",
            "localhost",
        ] {
            assert!(allowed(host, none), "{host}");
        }
        for host in [
            "evil.example:8080",
            "localhost.evil.example:8080",
            "lab-pc.local:8080",
            "evil.example",
            "[::1:8080",
            "a:b:8080",
        ] {
            assert!(!allowed(host, none), "{host}");
        }
        let listed = ["lab-pc.local".to_string()];
        assert!(allowed("lab-pc.local:8080", &listed));
        assert!(allowed("LAB-PC.local.:8080", &listed));
        assert!(!allowed("evil.example:8080", &listed));
        // A program that sends no Origin is not a browser: let in whatever its Host.
        assert!(origin_allowed_with(
            &headers(None, "evil.example:8080"),
            none
        ));
    }

    #[test]
    fn commands_past_the_rate_are_refused_then_pass_again() {
        let t0 = Instant::now();
        let mut b = CommandBudget::new(10.0, t0);
        let passed = (0..100).filter(|_| b.take(t0)).count();
        assert_eq!(passed, 20);
        assert!(!b.take(t0));
        assert!(b.take(t0 + Duration::from_millis(150)));
    }
}
