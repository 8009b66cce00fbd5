//! Datagrams sent and received many per system call (Linux's `sendmmsg` and `recvmmsg`),
//! behind a safe interface. The only `unsafe` code of the
//! server is here: building the kernel's message headers over Rust-owned buffers.
//!
//! A UDP server answering tens of thousands of requests a second spends most of its time in
//! the kernel; one call for a batch of datagrams saves each datagram its own system-call
//! entry and exit. What goes on the wire is the same bytes, in the same order.
//!
//! A datagram may also name the IPv4 address it is sent *from* (`IP_PKTINFO`), and a
//! received datagram tells the address it was sent *to* once [`want_destinations`] was
//! called: one socket bound to the wildcard address then speaks for many loopback addresses
//! (`simrob-load` gives each of its agents its own address in `127.0.0.0/8` that way).
//!
//! ```
//! use std::net::UdpSocket;
//! use simrob_server::datagrams::{send_all, Outgoing, Received};
//!
//! let a = UdpSocket::bind("127.0.0.1:0").unwrap();
//! let b = UdpSocket::bind("127.0.0.1:0").unwrap();
//! b.set_nonblocking(true).unwrap();
//! let to = b.local_addr().unwrap();
//! let out = [Outgoing { to, from: None, payload: b"one" }, Outgoing { to, from: None, payload: b"two" }];
//! assert_eq!(send_all(&a, &out).sent, 2);
//! let mut received = Received::new(8, 1500);
//! assert_eq!(received.recv(&b).unwrap(), 2);
//! assert_eq!(received.get(1).unwrap().payload, b"two");
//! assert_eq!(received.get(0).unwrap().from, a.local_addr().unwrap());
//! ```

#![allow(unsafe_code)]

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::AsFd;

/// Most datagrams one system call sends or receives.
pub const MAX_BATCH: usize = 64;

/// A datagram to send.
#[derive(Debug, Clone, Copy)]
pub struct Outgoing<'a> {
    pub to: SocketAddr,
    /// The IPv4 address to send it from (a local address; the socket bound to the wildcard
    /// address), or `None` for the socket's own.
    pub from: Option<Ipv4Addr>,
    pub payload: &'a [u8],
}

/// What [`send_all`] did.
#[derive(Debug, Default)]
pub struct Sent {
    /// Datagrams the OS took.
    pub sent: usize,
    /// Datagrams it refused (full send buffer, unreachable address…), each skipped.
    pub failed: usize,
    /// The last refusal's reason.
    pub error: Option<io::Error>,
    /// System calls made.
    pub calls: usize,
}

/// A received datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Datagram<'a> {
    pub from: SocketAddr,
    /// The address it was sent to, when the socket was asked for it ([`want_destinations`]).
    pub to: Option<IpAddr>,
    pub payload: &'a [u8],
}

/// Asks the OS to tell, with each datagram received on `socket`, the IPv4 address it was
/// sent to.
pub fn want_destinations(socket: &impl AsFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    let fd = raw(socket);
    // SAFETY: a valid descriptor, a pointer to a c_int and its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_IP,
            libc::IP_PKTINFO,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn raw(socket: &impl AsFd) -> libc::c_int {
    use std::os::fd::AsRawFd;
    socket.as_fd().as_raw_fd()
}

/// Room for one `IP_PKTINFO` control message, aligned as the kernel's headers need.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
struct Control([u8; 64]);

const PKTINFO_LEN: usize = std::mem::size_of::<libc::in_pktinfo>();
const CMSG_HEADER: usize = std::mem::size_of::<libc::cmsghdr>();
/// `CMSG_SPACE(sizeof(in_pktinfo))`: a header and the data, each rounded up to a word.
const PKTINFO_SPACE: usize = align(CMSG_HEADER) + align(PKTINFO_LEN);

const fn align(n: usize) -> usize {
    let w = std::mem::size_of::<usize>();
    (n + w - 1) & !(w - 1)
}

/// Sends every datagram of `datagrams`, in order, [`MAX_BATCH`] per system call. A datagram
/// the OS refuses is skipped (counted in [`Sent::failed`]) and the rest still go. The socket
/// may be blocking or not.
pub fn send_all(socket: &impl AsFd, datagrams: &[Outgoing<'_>]) -> Sent {
    let mut result = Sent::default();
    let fd = raw(socket);
    for chunk in datagrams.chunks(MAX_BATCH) {
        let names: Vec<socket2::SockAddr> = chunk.iter().map(|d| d.to.into()).collect();
        let mut iovs: Vec<libc::iovec> = chunk
            .iter()
            .map(|d| libc::iovec {
                iov_base: d.payload.as_ptr() as *mut libc::c_void,
                iov_len: d.payload.len(),
            })
            .collect();
        let mut controls = vec![Control([0; 64]); chunk.len()];
        let mut headers: Vec<libc::mmsghdr> = Vec::with_capacity(chunk.len());
        for (i, d) in chunk.iter().enumerate() {
            // SAFETY: msghdr is plain data; all-zero is its empty value.
            let mut h: libc::msghdr = unsafe { std::mem::zeroed() };
            h.msg_name = names[i].as_ptr() as *mut libc::c_void;
            h.msg_namelen = names[i].len();
            // The vectors are complete: these pointers stay valid until they are dropped,
            // after the calls below.
            h.msg_iov = &mut iovs[i];
            h.msg_iovlen = 1;
            if let Some(from) = d.from {
                let control = &mut controls[i];
                let header = libc::cmsghdr {
                    cmsg_len: (align(CMSG_HEADER) + PKTINFO_LEN) as _,
                    cmsg_level: libc::IPPROTO_IP,
                    cmsg_type: libc::IP_PKTINFO,
                };
                let info = libc::in_pktinfo {
                    ipi_ifindex: 0,
                    ipi_spec_dst: libc::in_addr {
                        s_addr: u32::from(from).to_be(),
                    },
                    ipi_addr: libc::in_addr { s_addr: 0 },
                };
                // SAFETY: both writes lie inside the 64-byte, 8-aligned buffer
                // (PKTINFO_SPACE is 32 bytes); unaligned writes need no alignment anyway.
                unsafe {
                    let base = control.0.as_mut_ptr();
                    std::ptr::write_unaligned(base.cast::<libc::cmsghdr>(), header);
                    std::ptr::write_unaligned(
                        base.add(align(CMSG_HEADER)).cast::<libc::in_pktinfo>(),
                        info,
                    );
                }
                h.msg_control = control.0.as_mut_ptr().cast();
                h.msg_controllen = PKTINFO_SPACE as _;
            }
            headers.push(libc::mmsghdr {
                msg_hdr: h,
                msg_len: 0,
            });
        }
        let mut at = 0;
        while at < headers.len() {
            let rest = &mut headers[at..];
            result.calls += 1;
            let n = send_some(fd, rest);
            match n {
                Ok(n) if n > 0 => {
                    result.sent += n;
                    at += n;
                }
                Ok(_) => {
                    result.failed += 1;
                    at += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // The first datagram of the rest was refused: skip it.
                    result.failed += 1;
                    result.error = Some(e);
                    at += 1;
                }
            }
        }
    }
    result
}

fn send_some(fd: libc::c_int, headers: &mut [libc::mmsghdr]) -> io::Result<usize> {
    // SAFETY: every header points at buffers that outlive this call (see send_all).
    let n = unsafe { libc::sendmmsg(fd, headers.as_mut_ptr(), headers.len() as _, 0) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Buffers for a batch of received datagrams, reused from call to call.
pub struct Received {
    data: Vec<u8>,
    size: usize,
    names: Vec<libc::sockaddr_storage>,
    controls: Vec<Control>,
    /// Per datagram: its slot in `data`, length, sender and destination.
    got: Vec<(usize, usize, SocketAddr, Option<IpAddr>)>,
}

impl Received {
    /// Room for `batch` datagrams (at most [`MAX_BATCH`]) of up to `size` bytes each (a
    /// longer one is cut to `size`).
    pub fn new(batch: usize, size: usize) -> Received {
        let batch = batch.clamp(1, MAX_BATCH);
        Received {
            data: vec![0; batch * size],
            size,
            // SAFETY: sockaddr_storage is plain data; all-zero is a valid value.
            names: vec![unsafe { std::mem::zeroed() }; batch],
            controls: vec![Control([0; 64]); batch],
            got: Vec::with_capacity(batch),
        }
    }

    /// Reads the datagrams waiting on `socket` (non-blocking: the socket must be, or
    /// `MSG_DONTWAIT` applies), at most the batch size; returns how many. Fewer than the
    /// batch size means the socket was left empty. An error of kind `WouldBlock` means none
    /// was waiting.
    pub fn recv(&mut self, socket: &impl AsFd) -> io::Result<usize> {
        self.got.clear();
        let fd = raw(socket);
        let batch = self.names.len();
        let mut iovs: Vec<libc::iovec> = self
            .data
            .chunks_mut(self.size)
            .map(|c| libc::iovec {
                iov_base: c.as_mut_ptr().cast(),
                iov_len: c.len(),
            })
            .collect();
        let mut headers: Vec<libc::mmsghdr> = Vec::with_capacity(batch);
        let slots = self.names.iter_mut().zip(&mut iovs).zip(&mut self.controls);
        for ((name, iov), control) in slots {
            // SAFETY: msghdr is plain data; all-zero is its empty value.
            let mut h: libc::msghdr = unsafe { std::mem::zeroed() };
            h.msg_name = (name as *mut libc::sockaddr_storage).cast();
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as _;
            h.msg_iov = iov;
            h.msg_iovlen = 1;
            h.msg_control = control.0.as_mut_ptr().cast();
            h.msg_controllen = 64;
            headers.push(libc::mmsghdr {
                msg_hdr: h,
                msg_len: 0,
            });
        }
        let n = loop {
            match recv_some(fd, &mut headers) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        for (i, h) in headers[..n].iter().enumerate() {
            let len = (h.msg_len as usize).min(self.size);
            let Some(from) = socket_addr(&self.names[i]) else {
                continue;
            };
            let to = destination(&h.msg_hdr);
            self.got.push((i, len, from, to));
        }
        // Datagrams from a socket family the server does not speak are left out, so the
        // count returned is what was read from the socket (for "was it emptied?").
        Ok(n)
    }

    /// How many datagrams the last [`Received::recv`] kept.
    pub fn len(&self) -> usize {
        self.got.len()
    }

    /// Whether the last [`Received::recv`] kept none.
    pub fn is_empty(&self) -> bool {
        self.got.is_empty()
    }

    /// The `i`-th datagram of the last [`Received::recv`].
    pub fn get(&self, i: usize) -> Option<Datagram<'_>> {
        let &(slot, len, from, to) = self.got.get(i)?;
        let start = slot * self.size;
        Some(Datagram {
            from,
            to,
            payload: &self.data[start..start + len],
        })
    }
}

/// The sender's address the kernel wrote, for IPv4 and IPv6.
fn socket_addr(storage: &libc::sockaddr_storage) -> Option<SocketAddr> {
    let family = libc::c_int::from(storage.ss_family);
    let p = (storage as *const libc::sockaddr_storage).cast::<u8>();
    if family == libc::AF_INET {
        // SAFETY: the storage holds a sockaddr_in (its family says so) and is larger.
        let a: libc::sockaddr_in = unsafe { std::ptr::read_unaligned(p.cast()) };
        let ip = Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
        Some(SocketAddr::new(IpAddr::V4(ip), u16::from_be(a.sin_port)))
    } else if family == libc::AF_INET6 {
        // SAFETY: the storage holds a sockaddr_in6 (its family says so) and is larger.
        let a: libc::sockaddr_in6 = unsafe { std::ptr::read_unaligned(p.cast()) };
        let ip = std::net::Ipv6Addr::from(a.sin6_addr.s6_addr);
        Some(SocketAddr::V6(std::net::SocketAddrV6::new(
            ip,
            u16::from_be(a.sin6_port),
            a.sin6_flowinfo,
            a.sin6_scope_id,
        )))
    } else {
        None
    }
}

/// The destination of a received datagram, from its `IP_PKTINFO` control message.
fn destination(h: &libc::msghdr) -> Option<IpAddr> {
    // `usize` with glibc, `u32` with musl.
    #[allow(clippy::unnecessary_cast)]
    let total = h.msg_controllen as usize;
    let base = h.msg_control as *const u8;
    let mut at = 0usize;
    while at + CMSG_HEADER <= total {
        // SAFETY: within the control buffer the kernel filled (msg_controllen bytes).
        let header: libc::cmsghdr =
            unsafe { std::ptr::read_unaligned(base.add(at).cast::<libc::cmsghdr>()) };
        let len = header.cmsg_len as usize;
        if len < CMSG_HEADER || at + len > total {
            return None;
        }
        if header.cmsg_level == libc::IPPROTO_IP
            && header.cmsg_type == libc::IP_PKTINFO
            && len >= align(CMSG_HEADER) + PKTINFO_LEN
        {
            // SAFETY: checked above that the message holds an in_pktinfo.
            let info: libc::in_pktinfo =
                unsafe { std::ptr::read_unaligned(base.add(at + align(CMSG_HEADER)).cast()) };
            return Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                info.ipi_addr.s_addr,
            ))));
        }
        at += align(len);
    }
    None
}

fn recv_some(fd: libc::c_int, headers: &mut [libc::mmsghdr]) -> io::Result<usize> {
    // SAFETY: every header points at buffers owned by the caller that outlive this call.
    let n = unsafe {
        libc::recvmmsg(
            fd,
            headers.as_mut_ptr(),
            headers.len() as _,
            libc::MSG_DONTWAIT,
            std::ptr::null_mut(),
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;

    fn pair() -> (UdpSocket, UdpSocket) {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        b.set_nonblocking(true).unwrap();
        (a, b)
    }

    #[test]
    fn a_batch_arrives_whole_and_in_order_with_its_sender() {
        let (a, b) = pair();
        crate::udp::set_receive_buffer(&b, 1 << 20).unwrap();
        let to = b.local_addr().unwrap();
        let payloads: Vec<Vec<u8>> = (0..100u32)
            .map(|i| format!("datagram {i} {}", "x".repeat(i as usize)).into_bytes())
            .collect();
        let out: Vec<Outgoing> = payloads
            .iter()
            .map(|p| Outgoing {
                to,
                from: None,
                payload: p,
            })
            .collect();
        let sent = send_all(&a, &out);
        assert_eq!((sent.sent, sent.failed), (100, 0));
        assert_eq!(sent.calls, 2, "64 a call");
        let mut received = Received::new(MAX_BATCH, 2048);
        let mut got = Vec::new();
        loop {
            match received.recv(&b) {
                Ok(n) => {
                    assert_eq!(n, received.len());
                    for i in 0..n {
                        let d = received.get(i).unwrap();
                        assert_eq!(d.from, a.local_addr().unwrap());
                        assert_eq!(d.to, None);
                        got.push(d.payload.to_vec());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(got, payloads);
    }

    #[test]
    fn a_refused_datagram_is_skipped_and_the_rest_still_go() {
        let (a, b) = pair();
        let to = b.local_addr().unwrap();
        // Larger than any UDP datagram: the OS refuses it.
        let huge = vec![0u8; 70_000];
        let out = [
            Outgoing {
                to,
                from: None,
                payload: b"first",
            },
            Outgoing {
                to,
                from: None,
                payload: &huge,
            },
            Outgoing {
                to,
                from: None,
                payload: b"third",
            },
        ];
        let sent = send_all(&a, &out);
        assert_eq!((sent.sent, sent.failed), (2, 1));
        assert!(sent.error.is_some());
        let mut received = Received::new(8, 2048);
        assert_eq!(received.recv(&b).unwrap(), 2);
        assert_eq!(received.get(0).unwrap().payload, b"first");
        assert_eq!(received.get(1).unwrap().payload, b"third");
        assert_eq!(
            received.recv(&b).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
    }

    #[test]
    fn one_socket_speaks_for_several_loopback_addresses() {
        // A wildcard socket sends from 127.0.0.x and learns which 127.0.0.x an answer is for.
        let tool = UdpSocket::bind("0.0.0.0:0").unwrap();
        tool.set_nonblocking(true).unwrap();
        want_destinations(&tool).unwrap();
        let port = tool.local_addr().unwrap().port();
        let (server, _) = pair();
        server.set_nonblocking(true).unwrap();
        let server_addr = server.local_addr().unwrap();
        let sources: Vec<Ipv4Addr> = (2..6).map(|i| Ipv4Addr::new(127, 0, 0, i)).collect();
        let out: Vec<Outgoing> = sources
            .iter()
            .map(|&ip| Outgoing {
                to: server_addr,
                from: Some(ip),
                payload: b"hello",
            })
            .collect();
        assert_eq!(send_all(&tool, &out).sent, 4);
        let mut received = Received::new(8, 2048);
        assert_eq!(received.recv(&server).unwrap(), 4);
        let senders: Vec<SocketAddr> = (0..4).map(|i| received.get(i).unwrap().from).collect();
        let expected: Vec<SocketAddr> = sources
            .iter()
            .map(|&ip| SocketAddr::new(IpAddr::V4(ip), port))
            .collect();
        assert_eq!(senders, expected);
        // The answers, each to the address it came from.
        let answers: Vec<Outgoing> = expected
            .iter()
            .map(|&to| Outgoing {
                to,
                from: None,
                payload: b"answer",
            })
            .collect();
        assert_eq!(send_all(&server, &answers).sent, 4);
        assert_eq!(received.recv(&tool).unwrap(), 4);
        let destinations: Vec<Option<IpAddr>> =
            (0..4).map(|i| received.get(i).unwrap().to).collect();
        let expected: Vec<Option<IpAddr>> =
            sources.iter().map(|&ip| Some(IpAddr::V4(ip))).collect();
        assert_eq!(destinations, expected);
    }
}
