//! The TCP shell around [`MrsCore`]: **one thread owns the core and every socket** (no locks
//! around the world). It waits on the sockets (mio: epoll/kqueue) until a request arrives or
//! the next step is due, answers its clients in turn (one request each a turn, each client's
//! in the order it sent them; the rest waits, past one read in TCP), steps the world in real
//! time (times a speed factor) or on `#STEP`, and writes snapshots.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use simrob_files::{NameError, OverQuota, Quota, ReadError};

use crate::core::{ClientId, CoreError, FileError, MapFiles, MrsCore, MAX_MAP_FILE};
use crate::protocol::{error_reply, MAX_LINE};

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
    /// A connection that sends nothing for this long is closed (its robot removed); `None`
    /// keeps silent clients forever (`--idle-timeout`).
    pub idle_timeout: Option<Duration>,
    /// When the server is full, a newcomer takes the place of the connection that has sent
    /// nothing for longest, if that is at least this long (it is told why and closed, its robot
    /// removed); `None`: a full server refuses newcomers (`--make-room-after`).
    pub make_room_after: Option<Duration>,
    /// Longest request line in bytes, its line ending left out (`--max-line-bytes`, 16 to
    /// [`MAX_LINE`]); a longer one is answered `E line too long …` and skipped.
    pub max_line_bytes: usize,
    /// Most bytes of replies waiting for a client that does not read them
    /// (`--max-output-bytes`); past it the client is told why, if it still can be, and
    /// closed.
    pub max_output_bytes: usize,
}

/// Default of [`ShellOptions::max_output_bytes`]: 1 MiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 1 << 20;

/// Default of [`ShellOptions::idle_timeout`]: ten minutes.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// Default of [`ShellOptions::make_room_after`]: ten seconds.
pub const DEFAULT_MAKE_ROOM_AFTER: Duration = Duration::from_secs(10);

impl Default for ShellOptions {
    fn default() -> Self {
        ShellOptions {
            speed: 1.0,
            snapshot: None,
            print_log: false,
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
            make_room_after: Some(DEFAULT_MAKE_ROOM_AFTER),
            max_line_bytes: MAX_LINE,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
        }
    }
}

/// [`MapFiles`] on one directory. A name is a plain file name in it: no directories, no
/// leading dot, no control characters, at most [`MAX_FILE_NAME`] bytes; a symbolic link that
/// leads out of the directory is refused. Errors name the file, never the directory's path.
#[derive(Debug, Clone)]
pub struct DirMapFiles {
    dir: PathBuf,
    /// What this server may write there (`--max-snapshots`, `--max-snapshot-bytes`): a
    /// client writing pictures under new names in a loop filled the disk (3,000 files, 59 MB
    /// in 5 s).
    quota: Quota,
    /// The files it wrote, by name, and their sizes now (toward `--max-snapshot-bytes`, a
    /// name written again at its last size).
    written: std::collections::HashMap<String, u64>,
    /// Pictures written, a name written again included.
    writes: usize,
    /// The largest map file read ([`MAX_MAP_FILE`] unless [`DirMapFiles::with_max_map_bytes`]).
    max_map_bytes: u64,
    /// How a user raises it, when the server says ([`DirMapFiles::with_max_map_bytes`]).
    raise_map_bytes_with: Option<&'static str>,
}

/// The longest map or snapshot file name, in bytes.
pub const MAX_FILE_NAME: usize = simrob_files::MAX_NAME;

impl DirMapFiles {
    /// Files under `dir`, which must be an existing directory (a mistyped name is refused,
    /// not created). Temporary files left in it by an earlier run that was killed while
    /// writing (`.simrob-tmp-…`, see [`simrob_files::is_temp_name`]) are removed; nothing
    /// else is touched.
    pub fn new(dir: impl Into<PathBuf>) -> Result<Self, FileError> {
        let dir = dir.into();
        if !dir.is_dir() {
            return Err(FileError::NotADirectory(dir));
        }
        let dir = dir
            .canonicalize()
            .map_err(|source| FileError::OpenDirectory {
                path: dir.clone(),
                source,
            })?;
        let removed = simrob_files::remove_stale_temps(&dir);
        if removed > 0 {
            tracing::info!("removed {removed} temporary files left by an interrupted write");
        }
        Ok(DirMapFiles {
            dir,
            quota: Quota::default(),
            written: std::collections::HashMap::new(),
            writes: 0,
            max_map_bytes: MAX_MAP_FILE,
            raise_map_bytes_with: None,
        })
    }

    /// The same files, reading maps of at most `max` bytes (at least 1); a larger one is
    /// refused with [`FileError::MapTooLarge`], naming its size, `max` and `raise_with`, how
    /// to raise it (`--max-map-bytes BYTES`).
    pub fn with_max_map_bytes(mut self, max: u64, raise_with: &'static str) -> Self {
        self.max_map_bytes = max;
        self.raise_map_bytes_with = Some(raise_with);
        self
    }

    /// The same files, writing at most `quota`.
    pub fn with_quota(mut self, quota: Quota) -> Self {
        self.quota = quota;
        self
    }

    /// The path of the file `name`, if `name` is a plain file name that stays inside.
    pub fn resolve(&self, name: &str) -> Result<PathBuf, FileError> {
        simrob_files::resolve_in(&self.dir, name).map_err(|e| name_error(name, e))
    }
}

/// Why `name` is not a plain file name for the map directory (`simrob_files`' rule).
pub fn check_file_name(name: &str) -> Result<(), FileError> {
    simrob_files::check_plain_name(name).map_err(|e| name_error(name, e))
}

/// [`FileError`]'s form of a name `simrob_files` refused.
fn name_error(name: &str, e: NameError) -> FileError {
    match e {
        NameError::Empty => FileError::EmptyName,
        NameError::ControlCharacters => FileError::ControlCharacters,
        NameError::TooLong { len } => FileError::NameTooLong {
            len,
            max: MAX_FILE_NAME,
        },
        NameError::NotPlain => FileError::NotPlain(name.to_string()),
        NameError::LeadsOut => FileError::LeavesDirectory(name.to_string()),
    }
}

impl MapFiles for DirMapFiles {
    fn read(&mut self, name: &str) -> Result<Vec<u8>, FileError> {
        let path = self.resolve(name)?;
        let raise_with = self.raise_map_bytes_with;
        simrob_files::read_bounded(&path, self.max_map_bytes).map_err(|e| match (e, raise_with) {
            (ReadError::Io(source), _) => FileError::Read {
                name: name.to_string(),
                source,
            },
            (ReadError::TooLarge { len, max }, Some(raise_with)) => FileError::MapTooLarge {
                name: name.to_string(),
                len,
                max,
                raise_with,
            },
            (ReadError::NotAFile | ReadError::TooLarge { .. }, _) => {
                FileError::NotAMapFile(name.to_string())
            }
        })
    }

    fn write(&mut self, name: &str, bytes: &[u8]) -> Result<PathBuf, FileError> {
        let path = self.resolve(name)?;
        let before = self.written.get(name).copied();
        // Every picture counts, under a new name or not: writing the same name in a loop
        // costs the server a picture each time.
        let files = self.writes + 1;
        let total: u64 = self.written.values().sum::<u64>() - before.unwrap_or(0);
        let size = bytes.len() as u64;
        let quota = self.quota;
        if let Err(over) = quota.admits(files, total + size) {
            let problem = match over {
                OverQuota::Files => format!(
                    "this server has written {} pictures, the most it may (--max-snapshots {})",
                    self.writes, quota.max_files
                ),
                OverQuota::Bytes => format!(
                    "{size} bytes more would make the files this server wrote larger than \
                     --max-snapshot-bytes {}",
                    quota.max_bytes
                ),
            };
            return Err(FileError::Quota {
                name: name.to_string(),
                problem,
            });
        }
        write_atomically(&path, bytes).map_err(|_| FileError::Write(name.to_string()))?;
        self.written.insert(name.to_string(), size);
        self.writes += 1;
        Ok(path)
    }
}

/// Writes a file through a temporary file of this process in the same directory, flushed to
/// disk, and a rename ([`simrob_files::write_atomically`]): readers see the old file or the new
/// one, never a part.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> Result<(), FileError> {
    simrob_files::write_atomically(path, bytes).map_err(|source| FileError::WriteAtomically {
        path: path.to_path_buf(),
        source,
    })
}

const LISTENER: Token = Token(usize::MAX);
const WAKE_SOURCE: Token = Token(usize::MAX - 1);

/// One client connection.
struct Conn {
    stream: TcpStream,
    client: ClientId,
    /// Bytes read and not yet taken (at most one read's worth: nothing more is read while a
    /// complete line waits here, so a client that sends faster than it is served is held
    /// back by TCP).
    unread: Vec<u8>,
    /// The line being gathered.
    input: Vec<u8>,
    output: Vec<u8>,
    /// The socket may have more to read (set when it turns readable, cleared at WouldBlock).
    readable: bool,
    /// The client closed its side: what it sent before is answered, then the connection is
    /// closed.
    ended: bool,
    /// Skipping the rest of an over-long line.
    discarding: bool,
    writable_interest: bool,
    /// When the client last sent something.
    last_input: Instant,
}

/// Called by the server's thread once per turn of its loop (after requests are answered and
/// steps run) with the core and the map files: a live view reads the world here and applies
/// the operator's commands between steps.
pub type ShellHook = Box<dyn FnMut(&mut MrsCore, &mut dyn MapFiles) + Send>;

/// The Mobile Robot Simulator server: a bound TCP listener and the core it serves.
pub struct MrsServer {
    listener: TcpListener,
    core: MrsCore,
    files: Box<dyn MapFiles + Send>,
    options: ShellOptions,
    hook: Option<ShellHook>,
    wake_source: Option<Box<dyn mio::event::Source + Send>>,
}

/// A server running on its own thread (see [`MrsServer::spawn`]).
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

    /// Stops the server, closes every connection, and returns the core as it ended (the
    /// robots of the connections still open are in it).
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
        let std_listener = std::net::TcpListener::bind(addr)?;
        std_listener.set_nonblocking(true)?;
        Ok(MrsServer {
            listener: TcpListener::from_std(std_listener),
            core,
            files,
            options,
            hook: None,
            wake_source: None,
        })
    }

    /// Calls `hook` once per turn of the loop (see [`ShellHook`]).
    pub fn with_hook(mut self, hook: ShellHook) -> Self {
        self.hook = Some(hook);
        self
    }

    /// Also wakes the loop (and so runs the hook) when `source` turns readable: the hook's
    /// own inputs, such as a ROS 2 participant's readers.
    pub fn with_wake_source(mut self, source: Box<dyn mio::event::Source + Send>) -> Self {
        self.wake_source = Some(source);
        self
    }

    /// Takes the hook back (to wrap it in another).
    pub fn take_hook(&mut self) -> Option<ShellHook> {
        self.hook.take()
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The core.
    pub fn core(&self) -> &MrsCore {
        &self.core
    }

    /// Runs on a background thread until [`MrsHandle::stop`].
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

    /// Serves until `stop` is set (checked at least every 50 ms); closes the connections and
    /// returns the core (the robots of the connections still open are in it).
    pub fn run(self, stop: &AtomicBool) -> io::Result<MrsCore> {
        let MrsServer {
            mut listener,
            mut core,
            mut files,
            options,
            mut hook,
            mut wake_source,
        } = self;
        let mut poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        if let Some(s) = wake_source.as_mut() {
            poll.registry()
                .register(s, WAKE_SOURCE, Interest::READABLE)?;
        }
        let mut events = Events::with_capacity(256);
        let mut conns: BTreeMap<usize, Conn> = BTreeMap::new();
        let mut next_id = 0usize;
        let stepped = core.config().stepped;
        let fast = options.speed <= 0.0 || !options.speed.is_finite();
        let period = if fast {
            Duration::ZERO
        } else {
            Duration::from_secs_f64((core.config().timestep / options.speed).clamp(1e-6, 3600.0))
        };
        let mut next_step = Instant::now() + period;
        let mut next_snapshot = Instant::now();
        let mut next_idle_sweep = Instant::now();
        // Connections may be waiting that the last accept could not take (out of descriptors).
        let mut accept_pending = false;
        let started = Instant::now();
        // Some client has requests waiting: the next poll does not wait.
        let mut busy = false;
        while !stop.load(Ordering::Relaxed) {
            let timeout = if busy {
                Duration::ZERO
            } else if stepped {
                Duration::from_millis(50)
            } else if fast {
                Duration::ZERO
            } else {
                next_step
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(50))
            };
            match poll.poll(&mut events, Some(timeout)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for event in events.iter() {
                if event.token() == WAKE_SOURCE {
                    // The hook, run below, takes what woke the loop.
                    continue;
                }
                if event.token() == LISTENER {
                    // Taken after the clients' turns: a robot whose client hung up leaves
                    // before a newcomer's is placed.
                    accept_pending = true;
                    continue;
                }
                let key = event.token().0;
                let Some(conn) = conns.get_mut(&key) else {
                    continue;
                };
                if event.is_readable() || event.is_read_closed() || event.is_error() {
                    conn.readable = true;
                }
                if !flush(conn, &poll, key) {
                    if let Some(mut c) = conns.remove(&key) {
                        let _ = poll.registry().deregister(&mut c.stream);
                        core.disconnect(c.client);
                    }
                }
            }
            // Each client in turn, one request each: what else it sent waits for the next
            // turn (and, past one read, in TCP), so no client holds up the others.
            let mut over = Vec::new();
            for (&key, conn) in conns.iter_mut() {
                if !conn.has_work() {
                    continue;
                }
                let open =
                    serve_one(conn, &mut core, files.as_mut(), &options) && flush(conn, &poll, key);
                if !open {
                    over.push(key);
                }
            }
            for key in over {
                if let Some(c) = conns.remove(&key) {
                    end(c, &poll, &mut core, options.max_output_bytes);
                }
            }
            if accept_pending {
                accept_pending = !accept_all(
                    &listener,
                    &poll,
                    &mut conns,
                    &mut next_id,
                    &mut core,
                    &options,
                );
            }
            busy = conns.values().any(Conn::has_work);
            if let Some(idle) = options.idle_timeout {
                let now = Instant::now();
                if now >= next_idle_sweep {
                    next_idle_sweep =
                        now + (idle / 4).clamp(Duration::from_millis(1), Duration::from_secs(1));
                    close_idle(&mut conns, &poll, &mut core, now, idle);
                }
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
            if let Some(hook) = hook.as_mut() {
                hook(&mut core, files.as_mut());
            }
            core.set_log_time(started.elapsed().as_secs_f64());
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
                                tracing::warn!("snapshot: {e}");
                            }
                        }
                        Err(e) => tracing::warn!("snapshot: {e}"),
                    }
                }
            }
        }
        for (_, mut c) in std::mem::take(&mut conns) {
            let _ = poll.registry().deregister(&mut c.stream);
            let _ = c.stream.shutdown(std::net::Shutdown::Both);
        }
        Ok(core)
    }
}

/// Accepts every waiting connection. Returns false when some may still be waiting (the
/// process is out of descriptors): the caller tries again on its next turn.
fn accept_all(
    listener: &TcpListener,
    poll: &Poll,
    conns: &mut BTreeMap<usize, Conn>,
    next_id: &mut usize,
    core: &mut MrsCore,
    options: &ShellOptions,
) -> bool {
    loop {
        match listener.accept() {
            Ok((mut stream, _)) => {
                // A client that already hung up gets no robot (connect-and-close floods
                // would fill the map with robots nobody drives).
                let mut probe = [0u8; 1];
                match stream.peek(&mut probe) {
                    Ok(0) => continue,
                    Err(e) if e.kind() != io::ErrorKind::WouldBlock => continue,
                    _ => {}
                }
                let key = *next_id;
                *next_id += 1;
                let client = ClientId(key as u64);
                let _ = stream.set_nodelay(true);
                let mut joined = core.connect(client);
                if let (Err(CoreError::Full(_)), Some(grace)) = (&joined, options.make_room_after) {
                    if make_room(conns, poll, core, Instant::now(), grace) {
                        joined = core.connect(client);
                    }
                }
                if let Err(e) = joined {
                    // Refused (full, or no room): say why, then close (and say so).
                    let _ = stream.write_all(format!("{}\n", error_reply(&e)).as_bytes());
                    core.refused(&e);
                    continue;
                }
                if poll
                    .registry()
                    .register(&mut stream, Token(key), Interest::READABLE)
                    .is_err()
                {
                    core.disconnect(client);
                    continue;
                }
                conns.insert(
                    key,
                    Conn {
                        stream,
                        client,
                        unread: Vec::new(),
                        input: Vec::new(),
                        output: Vec::new(),
                        // Data may have come with the connection.
                        readable: true,
                        ended: false,
                        discarding: false,
                        writable_interest: false,
                        last_input: Instant::now(),
                    },
                );
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.raw_os_error() == Some(24) || e.raw_os_error() == Some(23) => {
                // EMFILE / ENFILE: no descriptor for it now.
                tracing::warn!("cannot accept a connection: {e}");
                return false;
            }
            // A connection that failed before we took it: go on with the next.
            Err(_) => continue,
        }
    }
}

/// Closes the connection that has sent nothing for longest, if that is at least `grace`,
/// telling it why (a newcomer takes its place on a full server). False when none has.
fn make_room(
    conns: &mut BTreeMap<usize, Conn>,
    poll: &Poll,
    core: &mut MrsCore,
    now: Instant,
    grace: Duration,
) -> bool {
    let Some(key) = conns
        .iter()
        .filter(|(_, c)| now.saturating_duration_since(c.last_input) >= grace)
        .min_by_key(|(&k, c)| (c.last_input, k))
        .map(|(&k, _)| k)
    else {
        return false;
    };
    let Some(c) = conns.remove(&key) else {
        return false;
    };
    let silent = now.saturating_duration_since(c.last_input).as_secs_f64();
    close_with(
        c,
        poll,
        core,
        &format!(
            "closing: the server is full and this connection sent nothing for {silent:.1} s (a newcomer takes its place)"
        ),
    );
    true
}

/// Tells the client why, closes its connection and removes its robot.
fn close_with(mut c: Conn, poll: &Poll, core: &mut MrsCore, why: &str) {
    let _ = c.stream.write_all(&c.output);
    let _ = c
        .stream
        .write_all(format!("{}\n", error_reply(&why)).as_bytes());
    let _ = poll.registry().deregister(&mut c.stream);
    let _ = c.stream.shutdown(std::net::Shutdown::Both);
    core.disconnect_because(c.client, Some(why));
}

/// Closes the connections that sent nothing for `idle`, telling them why.
fn close_idle(
    conns: &mut BTreeMap<usize, Conn>,
    poll: &Poll,
    core: &mut MrsCore,
    now: Instant,
    idle: Duration,
) {
    let idle_keys: Vec<usize> = conns
        .iter()
        .filter(|(_, c)| now.saturating_duration_since(c.last_input) >= idle)
        .map(|(&k, _)| k)
        .collect();
    for key in idle_keys {
        if let Some(c) = conns.remove(&key) {
            let why = format!("closing: nothing received for {} s", idle.as_secs_f64());
            close_with(c, poll, core, &why);
        }
    }
}

impl Conn {
    /// Something to read or answer.
    fn has_work(&self) -> bool {
        self.readable || self.ended || self.unread.contains(&b'\n')
    }
}

/// Ends a connection that is over: what was answered goes out if the client still listens,
/// its robot leaves, and why is logged when it is the server's doing.
fn end(mut c: Conn, poll: &Poll, core: &mut MrsCore, max_output: usize) {
    let _ = poll.registry().deregister(&mut c.stream);
    if c.output.len() > max_output {
        let why = format!(
            "closing: more than {max_output} bytes of replies not read (--max-output-bytes {max_output})"
        );
        // Told if its socket still takes a line, never waited for.
        let _ = c
            .stream
            .write(format!("{}\n", error_reply(&why)).as_bytes());
        let _ = c.stream.shutdown(std::net::Shutdown::Both);
        core.disconnect_because(c.client, Some(&why));
        return;
    }
    let _ = c.stream.write_all(&c.output);
    core.disconnect(c.client);
}

/// Answers the client's next request, reading (one read at a time) only until one is
/// complete. Returns false when the connection is over.
fn serve_one(
    conn: &mut Conn,
    core: &mut MrsCore,
    files: &mut dyn MapFiles,
    options: &ShellOptions,
) -> bool {
    let mut buf = [0u8; 8192];
    // A line being skipped (too long) is read a few reads a turn, as any other request.
    for _ in 0..READS_PER_TURN {
        if take_one(conn, core, files, options.max_line_bytes) {
            return conn.output.len() <= options.max_output_bytes;
        }
        if conn.ended {
            // Everything it sent before the end is answered.
            return false;
        }
        if !conn.readable {
            return true;
        }
        match conn.stream.read(&mut buf) {
            Ok(0) => conn.ended = true,
            Ok(n) => {
                conn.last_input = Instant::now();
                conn.unread.extend_from_slice(&buf[..n]);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => conn.readable = false,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => conn.ended = true,
        }
    }
    true
}

/// Most reads of one client's socket in one turn of the loop.
const READS_PER_TURN: usize = 8;

/// Takes what was read up to and including the first complete line, and answers it. False
/// when no complete line was there (what there was is kept as the start of the next).
fn take_one(
    conn: &mut Conn,
    core: &mut MrsCore,
    files: &mut dyn MapFiles,
    max_line: usize,
) -> bool {
    while !conn.unread.is_empty() {
        let newline = conn.unread.iter().position(|&b| b == b'\n');
        let (taken, complete) = match newline {
            Some(i) => (i + 1, true),
            None => (conn.unread.len(), false),
        };
        let chunk: Vec<u8> = conn.unread.drain(..taken).collect();
        if conn.discarding {
            if complete {
                conn.discarding = false;
            }
            continue;
        }
        conn.input.extend_from_slice(&chunk);
        if !complete {
            if conn.input.len() > max_line + 2 {
                conn.input.clear();
                conn.discarding = true;
                push_line(
                    &mut conn.output,
                    &error_reply(&format!(
                        "line too long (at most {max_line} bytes, --max-line-bytes {max_line})"
                    )),
                );
                return true;
            }
            return false;
        }
        let line = std::mem::take(&mut conn.input);
        let ending = if line.ends_with(b"\r\n") { 2 } else { 1 };
        if line.len() - ending > max_line {
            push_line(
                &mut conn.output,
                &error_reply(&format!(
                    "line too long (at most {max_line} bytes, --max-line-bytes {max_line})"
                )),
            );
            return true;
        }
        match std::str::from_utf8(&line) {
            Ok(text) => {
                if let Some(reply) = core.handle_line(conn.client, text, files) {
                    push_line(&mut conn.output, &reply);
                } else {
                    // A blank line: no reply, and not a request.
                    continue;
                }
            }
            Err(_) => push_line(&mut conn.output, &error_reply(&"not UTF-8 text")),
        }
        return true;
    }
    false
}

fn push_line(out: &mut Vec<u8>, line: &str) {
    out.extend_from_slice(line.as_bytes());
    out.push(b'\n');
}

/// Writes pending replies; asks to be told when the socket can take more. Returns false
/// when the connection is over.
fn flush(conn: &mut Conn, poll: &Poll, key: usize) -> bool {
    while !conn.output.is_empty() {
        match conn.stream.write(&conn.output) {
            Ok(0) => return false,
            Ok(n) => {
                conn.output.drain(..n);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return false,
        }
    }
    let want_writable = !conn.output.is_empty();
    if want_writable != conn.writable_interest {
        let interest = if want_writable {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        if poll
            .registry()
            .reregister(&mut conn.stream, Token(key), interest)
            .is_err()
        {
            return false;
        }
        conn.writable_interest = want_writable;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::MapFiles;

    /// The largest map file read was the constant MAX_MAP_FILE: a server could not lower it
    /// nor raise it.
    #[test]
    fn the_largest_map_read_is_the_servers_to_set() {
        let dir = std::env::temp_dir().join(format!("simrob-mrs-mapsize-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).expect("a directory");
        std::fs::write(dir.join("m.txt"), b"100 100\n10 10 20 20\n").expect("a map");
        let mut files = DirMapFiles::new(&dir)
            .expect("a directory")
            .with_max_map_bytes(10, "--max-map-bytes BYTES");
        let e = files.read("m.txt").unwrap_err();
        assert!(
            matches!(
                e,
                FileError::MapTooLarge {
                    len: 20,
                    max: 10,
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "map m.txt is 20 bytes, more than the 10-byte limit: raise it with --max-map-bytes BYTES"
        );
        let mut files = files.with_max_map_bytes(20, "--max-map-bytes BYTES");
        assert_eq!(files.read("m.txt").expect("at the limit").len(), 20);
        // Without a limit set: MAX_MAP_FILE, as before.
        let mut files = DirMapFiles::new(&dir).expect("a directory");
        assert_eq!(files.read("m.txt").expect("the default").len(), 20);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_pictures_a_server_writes_are_bounded_in_number_and_bytes() {
        let dir = std::env::temp_dir().join(format!("simrob-mrs-quota-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).expect("a directory");
        let mut files = DirMapFiles::new(&dir)
            .expect("a directory")
            .with_quota(Quota {
                max_files: 2,
                max_bytes: 10,
            });
        files.write("a.png", b"1234").expect("first");
        files.write("b.png", b"1234").expect("second");
        // A third name: refused, and not written.
        let e = files.write("c.png", b"1").unwrap_err().to_string();
        assert!(e.contains("--max-snapshots 2"), "{e}");
        assert!(!dir.join("c.png").exists());
        // A name written again counts again: each picture costs the server its drawing.
        let e = files.write("a.png", b"1").unwrap_err().to_string();
        assert!(e.contains("--max-snapshots 2"), "{e}");
        assert_eq!(std::fs::read(dir.join("a.png")).expect("a"), b"1234");
        // The bytes are those of the files as they are now.
        let mut files = DirMapFiles::new(&dir)
            .expect("a directory")
            .with_quota(Quota {
                max_files: 10,
                max_bytes: 10,
            });
        files.write("a.png", b"1234").expect("first");
        files.write("b.png", b"1234").expect("second");
        files
            .write("a.png", b"123456")
            .expect("again, at its new size");
        let e = files.write("b.png", b"12345").unwrap_err().to_string();
        assert!(e.contains("--max-snapshot-bytes 10"), "{e}");
        assert_eq!(std::fs::read(dir.join("b.png")).expect("b"), b"1234");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
