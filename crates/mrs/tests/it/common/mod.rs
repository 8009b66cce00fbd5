//! A raw line-protocol connection for the end-to-end tests.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

pub struct Conn {
    pub reader: BufReader<TcpStream>,
    pub writer: TcpStream,
}

impl Conn {
    /// Connects; replies are awaited for at most 20 s (a failure guard).
    pub fn open(addr: SocketAddr) -> Conn {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        Conn {
            writer: s.try_clone().expect("clone"),
            reader: BufReader::new(s),
        }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write");
    }

    /// One reply line, without its terminator.
    pub fn read(&mut self) -> String {
        let mut l = String::new();
        self.reader.read_line(&mut l).expect("reply");
        assert!(l.ends_with('\n'), "reply not a full line: {l:?}");
        l.trim_end_matches('\n').to_string()
    }

    pub fn ask(&mut self, line: &str) -> String {
        self.send_raw(format!("{line}\n").as_bytes());
        self.read()
    }
}
