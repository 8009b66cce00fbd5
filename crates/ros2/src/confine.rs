//! `LOCALHOST` made a boundary for what comes in: RustDDS binds its sockets to the wildcard
//! address, so without more they take datagrams from any machine that reaches the domain's
//! ports (forged peers, commands). On Linux each socket the participant opened gets a packet
//! filter that keeps only what arrived on the loopback interface; the sockets are reached
//! through duplicates of their descriptors (`pidfd_getfd` on this process), so simrob never
//! borrows a descriptor it does not own.

use std::collections::BTreeSet;
use std::io;

/// The inodes of this process's sockets now.
pub(crate) fn sockets() -> io::Result<BTreeSet<u64>> {
    Ok(descriptors()?.into_iter().map(|(_, inode)| inode).collect())
}

/// Each open descriptor that is a socket, with the socket's inode.
fn descriptors() -> io::Result<Vec<(i32, u64)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd")? {
        let entry = entry?;
        let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        if let Some(inode) = socket_inode(&entry.path()) {
            out.push((fd, inode));
        }
    }
    Ok(out)
}

/// The inode of the socket a `/proc/self/fd` entry links to (`socket:[N]`).
fn socket_inode(link: &std::path::Path) -> Option<u64> {
    let target = std::fs::read_link(link).ok()?;
    target
        .to_str()?
        .strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The interface index of `lo`.
fn loopback_index() -> io::Result<u32> {
    std::fs::read_to_string("/sys/class/net/lo/ifindex")?
        .trim()
        .parse()
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "lo's interface index"))
}

/// Classic BPF: accept a datagram that arrived on interface `lo`, drop any other.
fn loopback_filter(lo: u32) -> [socket2::SockFilter; 4] {
    // BPF_LD | BPF_W | BPF_ABS of the ancillary field SKF_AD_IFINDEX (SKF_AD_OFF + 8).
    const LOAD_IFINDEX: (u16, u32) = (0x20, 0xffff_f000 + 8);
    const JUMP_IF_EQUAL: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RETURN: u16 = 0x06; // BPF_RET | BPF_K
    [
        socket2::SockFilter::new(LOAD_IFINDEX.0, 0, 0, LOAD_IFINDEX.1),
        socket2::SockFilter::new(JUMP_IF_EQUAL, 0, 1, lo),
        socket2::SockFilter::new(RETURN, 0, 0, u32::MAX),
        socket2::SockFilter::new(RETURN, 0, 0, 0),
    ]
}

/// Puts the loopback filter on every UDP socket bound to the wildcard IPv4 address that is
/// not among `before` (the sockets from before the participant was built). Returns how many.
pub(crate) fn to_loopback(before: &BTreeSet<u64>) -> io::Result<usize> {
    let filter = loopback_filter(loopback_index()?);
    let me = rustix::process::pidfd_open(
        rustix::process::getpid(),
        rustix::process::PidfdFlags::empty(),
    )?;
    let mut confined = 0;
    for (fd, inode) in descriptors()? {
        if before.contains(&inode) {
            continue;
        }
        let copy = match rustix::process::pidfd_getfd(
            &me,
            fd,
            rustix::process::PidfdGetfdFlags::empty(),
        ) {
            Ok(copy) => copy,
            // Closed since it was listed.
            Err(rustix::io::Errno::BADF) => continue,
            Err(e) => return Err(e.into()),
        };
        let path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&copy));
        if socket_inode(std::path::Path::new(&path)) != Some(inode) {
            continue; // The number was reused for another socket since.
        }
        let socket = socket2::SockRef::from(&copy);
        let udp = socket.r#type()? == socket2::Type::DGRAM;
        let wildcard = socket
            .local_addr()?
            .as_socket_ipv4()
            .is_some_and(|a| a.ip().is_unspecified());
        if udp && wildcard {
            socket.attach_filter(&filter)?;
            confined += 1;
        }
    }
    Ok(confined)
}
