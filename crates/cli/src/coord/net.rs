//! The GRI over TCP: a reader thread per connection turns lines into envelopes.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc::{self, Receiver, Sender};

use anyhow::Context;

use simrob_coord::wire::{encode, CodecError, Envelope, FrameDecoder, DEFAULT_MAX_MESSAGE_BYTES};

/// What the threads around a main loop saw.
pub enum Incoming {
    /// A message on connection `usize`.
    Message(usize, Envelope),
    /// A bad line on a connection (it stays open).
    Bad(usize, CodecError),
    /// The connection closed.
    Closed(usize),
    /// A new connection.
    Accepted(TcpStream),
    /// A line typed at the terminal.
    Line(String),
    /// The terminal closed.
    EndOfInput,
}

/// Reads `stream` until it closes, sending what arrives to `tx` tagged with `conn`.
pub fn spawn_reader(
    conn: usize,
    mut stream: TcpStream,
    limit: usize,
    tx: Sender<Incoming>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(format!("gri-read-{conn}"))
        .spawn(move || {
            let mut dec = FrameDecoder::new(limit);
            let mut buf = [0u8; 16 * 1024];
            loop {
                let n = match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                dec.push(&buf[..n]);
                while let Some(m) = dec.next_message() {
                    let item = match m {
                        Ok(env) => Incoming::Message(conn, env),
                        Err(e) => Incoming::Bad(conn, e),
                    };
                    if tx.send(item).is_err() {
                        return;
                    }
                }
            }
            if let Err(e) = dec.finish() {
                let _ = tx.send(Incoming::Bad(conn, e));
            }
            let _ = tx.send(Incoming::Closed(conn));
        })?;
    Ok(())
}

/// Writes one envelope as a line.
pub fn write_env(stream: &mut TcpStream, env: &Envelope) -> std::io::Result<()> {
    stream.write_all(encode(env).as_bytes())
}

/// Connects to a Control Center: the stream to write to, and what it sends.
pub fn connect_cc(addr: &str) -> anyhow::Result<(TcpStream, Receiver<Incoming>)> {
    let stream = TcpStream::connect(addr)
        .with_context(|| format!("connecting to the Control Center at {addr}"))?;
    stream.set_nodelay(true)?;
    let writer = stream.try_clone()?;
    let (tx, rx) = mpsc::channel();
    spawn_reader(0, stream, DEFAULT_MAX_MESSAGE_BYTES, tx)?;
    Ok((writer, rx))
}
