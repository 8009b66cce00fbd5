//! Which addresses refused our datagrams: the socket's error queue (Linux's `IP_RECVERR`).
//!
//! A datagram sent to a UDP port nobody listens on is answered by that host with ICMP
//! *port unreachable*, at once on this machine and on the LAN. An unconnected socket hears
//! nothing of it unless it asks: with `IP_RECVERR` (`IPV6_RECVERR`) on, the kernel queues
//! each such error with the address the refused datagram was sent to, and
//! [`take_refused`] reads them (`recvmsg` with `MSG_ERRQUEUE`, through `nix`: no `unsafe`
//! here). The server removes the agents registered at those addresses.
//!
//! ```
//! use std::net::UdpSocket;
//! use simrob_server::errqueue::{take_refused, want_errors};
//!
//! let server = UdpSocket::bind("127.0.0.1:0").unwrap();
//! want_errors(&server).unwrap();
//! // A port that was open and is closed now.
//! let gone = UdpSocket::bind("127.0.0.1:0").unwrap();
//! let to = gone.local_addr().unwrap();
//! drop(gone);
//! server.send_to(b"hello", to).unwrap();
//! // The ICMP answer comes back at once; a read then fails with "connection refused".
//! server.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
//! let e = server.recv_from(&mut [0u8; 16]).unwrap_err();
//! assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
//! assert_eq!(take_refused(&server).unwrap(), vec![to]);
//! ```

use std::io;
use std::io::IoSliceMut;
use std::net::{SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsFd, AsRawFd};

use nix::errno::Errno;
use nix::sys::socket::{
    getsockname, recvmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags, SockaddrLike,
    SockaddrStorage,
};

/// Most errors read in one call of [`take_refused`] (the kernel keeps more for the next).
pub const MAX_ERRORS: usize = 256;

/// Asks the kernel to queue the errors of datagrams sent from `socket` (ICMP port
/// unreachable among them) with the address each was sent to. For an IPv6 socket, IPv4
/// errors too where the socket also speaks IPv4.
pub fn want_errors(socket: &impl AsFd) -> io::Result<()> {
    let local: SockaddrStorage =
        getsockname(socket.as_fd().as_raw_fd()).map_err(io::Error::from)?;
    if local.as_sockaddr_in6().is_some() {
        setsockopt(socket, sockopt::Ipv6RecvErr, &true).map_err(io::Error::from)?;
        // An IPv6-only socket refuses the IPv4 option; it needs none.
        let _ = setsockopt(socket, sockopt::Ipv4RecvErr, &true);
        Ok(())
    } else {
        setsockopt(socket, sockopt::Ipv4RecvErr, &true).map_err(io::Error::from)
    }
}

/// Reads the errors waiting in `socket`'s error queue (at most [`MAX_ERRORS`], without
/// blocking) and returns the addresses that answered *port unreachable*, in the order the
/// errors came. Other errors (a host unreachable for now, a datagram too large for the
/// path) are read and left out: they say nothing for sure about the program at the address.
pub fn take_refused(socket: &impl AsFd) -> io::Result<Vec<SocketAddr>> {
    let fd = socket.as_fd().as_raw_fd();
    let mut refused = Vec::new();
    // The start of the refused datagram comes back too; it is not needed.
    let mut data = [0u8; 64];
    let mut control = nix::cmsg_space!(libc::sock_extended_err, libc::sockaddr_in6);
    for _ in 0..MAX_ERRORS {
        let mut iov = [IoSliceMut::new(&mut data)];
        let msg = match recvmsg::<SockaddrStorage>(
            fd,
            &mut iov,
            Some(&mut control),
            MsgFlags::MSG_ERRQUEUE | MsgFlags::MSG_DONTWAIT,
        ) {
            Ok(msg) => msg,
            Err(Errno::EAGAIN) => break,
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        };
        let to = msg.address.and_then(|a| socket_addr(&a));
        let mut port_unreachable = false;
        if let Ok(cmsgs) = msg.cmsgs() {
            for cmsg in cmsgs {
                match cmsg {
                    ControlMessageOwned::Ipv4RecvErr(e, _)
                    | ControlMessageOwned::Ipv6RecvErr(e, _) => {
                        port_unreachable |= e.ee_errno == libc::ECONNREFUSED as u32;
                    }
                    _ => {}
                }
            }
        }
        if let (true, Some(to)) = (port_unreachable, to) {
            refused.push(to);
        }
    }
    Ok(refused)
}

fn socket_addr(a: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(v4) = a.as_sockaddr_in() {
        return Some(SocketAddr::V4(SocketAddrV4::from(*v4)));
    }
    if let Some(v6) = a.as_sockaddr_in6() {
        let v6 = SocketAddrV6::from(*v6);
        // An IPv4 peer of a dual-stack socket reads as an IPv4-mapped address.
        return Some(match v6.ip().to_ipv4_mapped() {
            Some(ip) => SocketAddr::new(ip.into(), v6.port()),
            None => SocketAddr::V6(v6),
        });
    }
    let _ = a.family();
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::time::Duration;

    /// Sends to a port that was just closed and returns what the error queue names (the
    /// read that fails with "connection refused" is the event waited for; its time-out only
    /// guards against a hang).
    fn refused_after_send(local: &str) -> Option<(SocketAddr, Vec<SocketAddr>)> {
        let server = UdpSocket::bind(local).ok()?;
        want_errors(&server).unwrap();
        let gone = UdpSocket::bind(local).unwrap();
        let to = gone.local_addr().unwrap();
        drop(gone);
        server.send_to(b"broadcast", to).unwrap();
        server
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let e = server.recv_from(&mut [0u8; 16]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
        Some((to, take_refused(&server).unwrap()))
    }

    #[test]
    fn a_closed_port_is_named_over_ipv4_and_ipv6_loopback() {
        let (to, refused) = refused_after_send("127.0.0.1:0").unwrap();
        assert_eq!(refused, vec![to]);
        // IPv6 where the machine has it.
        if let Some((to, refused)) = refused_after_send("[::1]:0") {
            assert_eq!(refused, vec![to]);
        }
    }

    #[test]
    fn an_empty_queue_reads_nothing_and_does_not_block() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        want_errors(&server).unwrap();
        assert!(take_refused(&server).unwrap().is_empty());
    }
}
