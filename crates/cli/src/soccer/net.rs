//! The team-message socket: UDP on a shared port, broadcast.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::time::Duration;

use anyhow::{Context, Result};
use socket2::{Domain, Protocol, Socket, Type};

/// A socket bound to `0.0.0.0:port` that several processes on one machine can share (every
/// one of them receives each broadcast), with broadcast sending allowed.
pub fn team_socket(port: u16) -> Result<UdpSocket> {
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))
        .context("cannot create the team-message socket")?;
    s.set_reuse_address(true)?;
    #[cfg(unix)]
    s.set_reuse_port(true)?;
    s.set_broadcast(true)?;
    let addr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port));
    s.bind(&addr.into())
        .with_context(|| format!("cannot bind the team-message port {port}"))?;
    let u: UdpSocket = s.into();
    u.set_read_timeout(Some(Duration::from_millis(20)))?;
    Ok(u)
}

/// Where team messages go.
pub fn destination(address: &str, port: u16) -> Result<SocketAddr> {
    let ip: Ipv4Addr = address
        .parse()
        .with_context(|| format!("{address:?} is not an IPv4 address"))?;
    Ok(SocketAddr::V4(SocketAddrV4::new(ip, port)))
}
