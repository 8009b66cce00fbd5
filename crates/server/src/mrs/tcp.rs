//! The TCP shell around [`MrsCore`]: an acceptor thread, one thread per connection reading
//! lines, and one simulation thread that owns the core (no locks around the world), steps it
//! in real time (times a speed factor) or on `#STEP`, answers requests and writes snapshots.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::core::{ClientId, MapFiles, MrsCore, MAX_MAP_FILE};
use super::protocol::{error_reply, MAX_LINE};
use crate::simrob::DirStore;

/// How the shell runs the core.
#[derive(Clone, Debug)]
pub struct ShellOptions {
    /// Simulated seconds per wall-clock second (1 = real time); 0 = as fast as possible.
    /// Ignored by a stepped core.
    pub speed: f64,
    /// Write a PNG of the world to this file every so often.
    pub snapshot: Option<(PathBuf, Duration)>,
    /// Print log lines (connections, `M` messages) on standard output.
    pub print_log: bool,
}

impl Default for ShellOptions {
    fn default() -> Self {
        ShellOptions {
            speed: 1.0,
            snapshot: None,
            print_log: false,
        }
    }
}

/// [`MapFiles`] on a directory: names are confined to it (see [`DirStore::resolve`]).
#[derive(Debug, Clone)]
pub struct DirMapFiles {
    store: DirStore,
}

static TEMP: AtomicU64 = AtomicU64::new(0);

impl DirMapFiles {
    /// Files under `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Result<Self, String> {
        Ok(DirMapFiles {
            store: DirStore::new(dir)?,
        })
    }
}

impl MapFiles for DirMapFiles {
    fn read(&mut self, name: &str) -> Result<Vec<u8>, String> {
        let path = self.store.resolve(name)?;
        let meta =
            std::fs::metadata(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if !meta.is_file() || meta.len() > MAX_MAP_FILE {
            return Err(format!(
                "cannot read {}: not a file of at most {MAX_MAP_FILE} bytes",
                path.display()
            ));
        }
        std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    }

    fn write(&mut self, name: &str, bytes: &[u8]) -> Result<PathBuf, String> {
        let path = self.store.resolve(name)?;
        write_atomically(&path, bytes)?;
        Ok(path)
    }
}

/// Writes a file through a temporary file and a rename.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "snapshot".into());
    let temp = dir.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        TEMP.fetch_add(1, Ordering::Relaxed)
    ));
    let result = std::fs::write(&temp, bytes).and_then(|()| std::fs::rename(&temp, path));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        format!("cannot write {}: {e}", path.display())
    })
}

enum Event {
    Connect(ClientId, Sender<Option<String>>),
    Line(ClientId, String),
    Disconnect(ClientId),
}

/// The Mobile Robot Simulator server: a bound TCP listener and the core it serves.
pub struct MrsServer {
    listener: TcpListener,
    core: MrsCore,
    files: Box<dyn MapFiles + Send>,
    options: ShellOptions,
}

/// A server running on its own threads (see [`MrsServer::spawn`]).
pub struct MrsHandle {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<io::Result<MrsCore>>>,
}

impl MrsHandle {
    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the server, closes every connection, and returns the core as it ended.
    pub fn stop(mut self) -> io::Result<MrsCore> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| io::Error::other("the simulation thread panicked"))?,
            None => Err(io::Error::other("already stopped")),
        }
    }
}

impl Drop for MrsHandle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl MrsServer {
    /// Binds `addr` (port 0 = a free port).
    pub fn bind(
        addr: impl ToSocketAddrs,
        core: MrsCore,
        files: Box<dyn MapFiles + Send>,
        options: ShellOptions,
    ) -> io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        Ok(MrsServer {
            listener,
            core,
            files,
            options,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The core.
    pub fn core(&self) -> &MrsCore {
        &self.core
    }

    /// Runs on background threads until [`MrsHandle::stop`].
    pub fn spawn(self) -> io::Result<MrsHandle> {
        let addr = self.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("mrs-sim".into())
            .spawn(move || self.run(&flag))?;
        Ok(MrsHandle {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// Serves until `stop` is set; returns the core.
    pub fn run(self, stop: &AtomicBool) -> io::Result<MrsCore> {
        let MrsServer {
            listener,
            mut core,
            mut files,
            options,
        } = self;
        listener.set_nonblocking(true)?;
        let (tx, rx) = mpsc::channel::<Event>();
        let streams: Arc<Mutex<HashMap<ClientId, TcpStream>>> = Arc::default();
        let done = Arc::new(AtomicBool::new(false));
        let acceptor = {
            let (tx, streams, done) = (tx.clone(), streams.clone(), done.clone());
            std::thread::Builder::new()
                .name("mrs-accept".into())
                .spawn(move || accept_loop(listener, tx, streams, done))?
        };
        drop(tx);
        let result = sim_loop(&mut core, files.as_mut(), &options, &rx, stop);
        done.store(true, Ordering::Relaxed);
        if let Ok(map) = streams.lock() {
            for s in map.values() {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
        let _ = acceptor.join();
        result.map(|()| core)
    }
}

fn accept_loop(
    listener: TcpListener,
    tx: Sender<Event>,
    streams: Arc<Mutex<HashMap<ClientId, TcpStream>>>,
    done: Arc<AtomicBool>,
) {
    let mut next = 0u64;
    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    while !done.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => {
                let id = ClientId(next);
                next += 1;
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_nodelay(true);
                if let Ok(clone) = stream.try_clone() {
                    if let Ok(mut m) = streams.lock() {
                        m.insert(id, clone);
                    }
                }
                let (tx, streams) = (tx.clone(), streams.clone());
                if let Ok(h) = std::thread::Builder::new()
                    .name(format!("mrs-conn-{}", id.0))
                    .spawn(move || {
                        serve_connection(id, stream, &tx);
                        let _ = tx.send(Event::Disconnect(id));
                        if let Ok(mut m) = streams.lock() {
                            m.remove(&id);
                        }
                    })
                {
                    workers.push(h);
                }
                workers.retain(|h| !h.is_finished());
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    if let Ok(m) = streams.lock() {
        for s in m.values() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
    for h in workers {
        let _ = h.join();
    }
}

/// What one read of a request line gave.
enum ReadLine {
    Line(Vec<u8>),
    TooLong,
    Eof,
}

fn read_line(reader: &mut impl BufRead) -> io::Result<ReadLine> {
    let mut buf = Vec::new();
    let n = reader
        .by_ref()
        .take(MAX_LINE as u64 + 2)
        .read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(ReadLine::Eof);
    }
    if buf.last() == Some(&b'\n') || buf.len() <= MAX_LINE + 1 {
        if buf.len() > MAX_LINE + 2 {
            return Ok(ReadLine::TooLong);
        }
        return Ok(ReadLine::Line(buf));
    }
    // Too long: skip to the end of the line.
    loop {
        buf.clear();
        let n = reader
            .by_ref()
            .take(64 * 1024)
            .read_until(b'\n', &mut buf)?;
        if n == 0 || buf.last() == Some(&b'\n') {
            return Ok(ReadLine::TooLong);
        }
    }
}

fn serve_connection(id: ClientId, stream: TcpStream, tx: &Sender<Event>) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let _ = writer.set_write_timeout(Some(Duration::from_secs(10)));
    let (reply_tx, reply_rx) = mpsc::channel::<Option<String>>();
    if tx.send(Event::Connect(id, reply_tx)).is_err() {
        return;
    }
    // The connect answer: None = accepted, Some(error) = refused.
    match reply_rx.recv() {
        Ok(None) => {}
        Ok(Some(refusal)) => {
            let _ = writer.write_all(format!("{refusal}\n").as_bytes());
            return;
        }
        Err(_) => return,
    }
    let mut reader = BufReader::new(stream);
    loop {
        let line = match read_line(&mut reader) {
            Ok(ReadLine::Line(bytes)) => bytes,
            Ok(ReadLine::TooLong) => {
                let e = error_reply(&format!("line too long (at most {MAX_LINE} bytes)"));
                if writer.write_all(format!("{e}\n").as_bytes()).is_err() {
                    return;
                }
                continue;
            }
            Ok(ReadLine::Eof) | Err(_) => return,
        };
        let text = match String::from_utf8(line) {
            Ok(t) => t,
            Err(_) => {
                let e = error_reply(&"not UTF-8 text");
                if writer.write_all(format!("{e}\n").as_bytes()).is_err() {
                    return;
                }
                continue;
            }
        };
        if tx.send(Event::Line(id, text)).is_err() {
            return;
        }
        match reply_rx.recv() {
            Ok(Some(reply)) => {
                let mut out = reply.into_bytes();
                out.push(b'\n');
                if writer.write_all(&out).is_err() {
                    return;
                }
            }
            Ok(None) => {}
            Err(_) => return,
        }
    }
}

fn sim_loop(
    core: &mut MrsCore,
    files: &mut dyn MapFiles,
    options: &ShellOptions,
    rx: &Receiver<Event>,
    stop: &AtomicBool,
) -> io::Result<()> {
    let stepped = core.config().stepped;
    let fast = options.speed <= 0.0 || !options.speed.is_finite();
    let period = if fast {
        Duration::ZERO
    } else {
        Duration::from_secs_f64((core.config().timestep / options.speed).clamp(1e-6, 3600.0))
    };
    let mut replies: HashMap<ClientId, Sender<Option<String>>> = HashMap::new();
    let mut next_step = Instant::now() + period;
    let mut next_snapshot = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let timeout = if stepped {
            Duration::from_millis(50)
        } else if fast {
            Duration::ZERO
        } else {
            next_step
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(50))
        };
        let first = if timeout.is_zero() {
            rx.try_recv().map_err(|e| match e {
                mpsc::TryRecvError::Empty => RecvTimeoutError::Timeout,
                mpsc::TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
            })
        } else {
            rx.recv_timeout(timeout)
        };
        let mut event = match first {
            Ok(ev) => Some(ev),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        // Handle everything that is waiting, then step.
        while let Some(ev) = event.take() {
            match ev {
                Event::Connect(id, reply) => {
                    let answer = match core.connect(id) {
                        Ok(_) => {
                            replies.insert(id, reply.clone());
                            None
                        }
                        Err(e) => Some(error_reply(&e)),
                    };
                    let _ = reply.send(answer);
                }
                Event::Line(id, line) => {
                    let answer = core.handle_line(id, &line, files);
                    if let Some(r) = replies.get(&id) {
                        let _ = r.send(answer);
                    }
                }
                Event::Disconnect(id) => {
                    replies.remove(&id);
                    core.disconnect(id);
                }
            }
            event = rx.try_recv().ok();
        }
        if !stepped {
            if fast {
                core.step();
            } else {
                let now = Instant::now();
                let mut behind = 0;
                while now >= next_step {
                    core.step();
                    next_step += period;
                    behind += 1;
                    if behind > 1000 {
                        // Far behind (the machine is overloaded): let simulated time slip.
                        next_step = now + period;
                        break;
                    }
                }
            }
        }
        if options.print_log {
            for l in core.drain_log() {
                println!("{l}");
            }
        } else {
            core.drain_log();
        }
        if let Some((path, every)) = &options.snapshot {
            if Instant::now() >= next_snapshot {
                next_snapshot = Instant::now() + *every;
                match core.snapshot_png() {
                    Ok(png) => {
                        if let Err(e) = write_atomically(path, &png) {
                            eprintln!("{e}");
                        }
                    }
                    Err(e) => eprintln!("{e}"),
                }
            }
        }
    }
    Ok(())
}
