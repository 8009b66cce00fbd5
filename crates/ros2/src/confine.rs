//! A boundary for what comes in, as a packet filter on each socket the participant opened
//! (Linux). The sockets are reached through duplicates of their descriptors (`pidfd_getfd`
//! on this process), so simrob never borrows a descriptor it does not own.
//!
//! * `LOCALHOST`: RustDDS binds its sockets to the wildcard address, so without more they
//!   take datagrams from any machine that reaches the domain's ports (forged peers,
//!   commands); the filter keeps only what arrived on the loopback interface.
//! * Large samples: RustDDS reassembles a fragmented sample (`DATA_FRAG`) in a buffer of the
//!   size its first fragment announces, up to 128 at a time per writer, with no limit of its
//!   own. The filter drops every datagram holding a `DATA_FRAG` that announces a sample
//!   larger than the largest one simrob takes, among its first [`MAX_SUBMESSAGES`]
//!   submessages (a classic BPF program has at most 4096 instructions).

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

/// Most submessages the filter reads in one datagram (some 59 instructions each); what
/// follows them is not read, and the datagram is taken: a peer packs many (a burst of
/// discovery data, each with its timestamp), and dropping those would hide its topics.
pub(crate) const MAX_SUBMESSAGES: usize = 64;

/// One classic BPF instruction whose jumps name labels (resolved by [`assemble`]).
enum Op {
    /// An instruction without jumps.
    Plain(u16, u32),
    /// A conditional jump (`code`, `k`) to label `yes`, else to label `no`.
    Jump(u16, u32, usize, usize),
    /// A label's place.
    Label(usize),
}

const LD_W_ABS: u16 = 0x20;
const LD_LEN: u16 = 0x80;
const LD_B_IND: u16 = 0x50;
const LD_H_IND: u16 = 0x48;
const LD_W_IND: u16 = 0x40;
const LD_MEM: u16 = 0x60;
const LD_IMM: u16 = 0x00;
const LDX_IMM: u16 = 0x01;
const LDX_MEM: u16 = 0x61;
const ST: u16 = 0x02;
const STX: u16 = 0x03;
const ADD_K: u16 = 0x04;
const ADD_X: u16 = 0x0c;
const SUB_X: u16 = 0x1c;
const LSH_K: u16 = 0x64;
const TAX: u16 = 0x07;
const RET_K: u16 = 0x06;
const JEQ: u16 = 0x15;
const JGT: u16 = 0x25;
const JGE: u16 = 0x35;
const JSET: u16 = 0x45;

/// The instructions, each jump's labels made offsets (forward only, at most 255).
fn assemble(ops: &[Op]) -> Vec<socket2::SockFilter> {
    let mut at = std::collections::BTreeMap::new();
    let mut n = 0usize;
    for op in ops {
        match op {
            Op::Label(l) => {
                at.insert(*l, n);
            }
            _ => n += 1,
        }
    }
    let mut out = Vec::with_capacity(n);
    for op in ops {
        match *op {
            Op::Plain(code, k) => out.push(socket2::SockFilter::new(code, 0, 0, k)),
            Op::Jump(code, k, yes, no) => {
                let here = out.len() + 1;
                let off = |l: usize| {
                    let to = at[&l];
                    debug_assert!(to >= here && to - here <= 255, "a jump out of reach");
                    (to - here) as u8
                };
                out.push(socket2::SockFilter::new(code, off(yes), off(no), k));
            }
            Op::Label(_) => {}
        }
    }
    out
}

/// Fresh labels.
struct Labels(usize);

impl Labels {
    fn fresh(&mut self) -> usize {
        self.0 += 1;
        self.0
    }
}

/// Loads into A the 16- (`bytes` 2) or 32-bit (4) number at X + `off`, in the byte order
/// of the submessage at X (its flags' bit 0: little endian); X is kept (in M[0]).
fn load_number(ops: &mut Vec<Op>, off: u32, bytes: u32, labels: &mut Labels) {
    let (little, big, done) = (labels.fresh(), labels.fresh(), labels.fresh());
    ops.push(Op::Plain(LD_B_IND, 1));
    ops.push(Op::Jump(JSET, 1, little, big));
    ops.push(Op::Label(big));
    ops.push(Op::Plain(if bytes == 2 { LD_H_IND } else { LD_W_IND }, off));
    ops.push(Op::Jump(JEQ, 0, done, done));
    ops.push(Op::Label(little));
    // Little endian: from the highest byte down, A = A << 8 + byte, the sum kept in M[1].
    ops.push(Op::Plain(STX, 0));
    ops.push(Op::Plain(LD_B_IND, off + bytes - 1));
    for b in (0..bytes - 1).rev() {
        ops.push(Op::Plain(LSH_K, 8));
        ops.push(Op::Plain(ST, 1));
        ops.push(Op::Plain(LDX_MEM, 0));
        ops.push(Op::Plain(LD_B_IND, off + b));
        ops.push(Op::Plain(TAX, 0));
        ops.push(Op::Plain(LD_MEM, 1));
        ops.push(Op::Plain(ADD_X, 0));
    }
    ops.push(Op::Plain(LDX_MEM, 0));
    ops.push(Op::Label(done));
}

/// Classic BPF over a UDP datagram (offset 0: the UDP header, 8: the RTPS message): with
/// `lo`, drop a datagram that did not arrive on that interface; drop one that holds a
/// `DATA_FRAG` announcing a sample of more than `max_sample` bytes among its first
/// [`MAX_SUBMESSAGES`] submessages; accept the rest (what is not RTPS is RustDDS's to
/// refuse).
pub(crate) fn filter(lo: Option<u32>, max_sample: u32) -> Vec<socket2::SockFilter> {
    // SKF_AD_OFF + SKF_AD_IFINDEX: the interface a datagram arrived on.
    const IFINDEX: u32 = 0xffff_f000 + 8;
    const FIRST_SUBMESSAGE: u32 = 8 + 20;
    const DATA_FRAG: u32 = 0x16;
    const PAD: u32 = 0x01;
    const INFO_TS: u32 = 0x09;
    // DATA_FRAG: header 4, extra flags 2, to inline QoS 2, reader 4, writer 4, sequence
    // number 8, first fragment 4, fragments here 2, fragment size 2, then the sample's size.
    const SAMPLE_SIZE: u32 = 32;
    let mut labels = Labels(0);
    let mut ops = Vec::new();
    if let Some(lo) = lo {
        let (ok, other) = (labels.fresh(), labels.fresh());
        ops.push(Op::Plain(LD_W_ABS, IFINDEX));
        ops.push(Op::Jump(JEQ, lo, ok, other));
        ops.push(Op::Label(other));
        ops.push(Op::Plain(RET_K, 0));
        ops.push(Op::Label(ok));
    }
    ops.push(Op::Plain(LDX_IMM, FIRST_SUBMESSAGE));
    // Each pass reads the submessage at X, its returns within its jumps' reach.
    for _ in 0..MAX_SUBMESSAGES {
        let [body, frag, length, zero, not_pad, empty, step, accept, drop, pass_end] =
            std::array::from_fn(|_| labels.fresh());
        // At the end (fewer than 4 bytes left): accept.
        ops.push(Op::Plain(LD_LEN, 0));
        ops.push(Op::Plain(SUB_X, 0));
        ops.push(Op::Jump(JGE, 4, body, accept));
        ops.push(Op::Label(body));
        ops.push(Op::Plain(LD_B_IND, 0));
        ops.push(Op::Jump(JEQ, DATA_FRAG, frag, length));
        ops.push(Op::Label(frag));
        load_number(&mut ops, SAMPLE_SIZE, 4, &mut labels);
        ops.push(Op::Jump(JGT, max_sample, drop, length));
        ops.push(Op::Label(length));
        load_number(&mut ops, 2, 2, &mut labels);
        // Length 0: the submessage runs to the end of the datagram (but a PAD's or an
        // INFO_TS's is just empty).
        ops.push(Op::Jump(JEQ, 0, zero, step));
        ops.push(Op::Label(zero));
        ops.push(Op::Plain(LD_B_IND, 0));
        ops.push(Op::Jump(JEQ, PAD, empty, not_pad));
        ops.push(Op::Label(not_pad));
        ops.push(Op::Jump(JEQ, INFO_TS, empty, accept));
        ops.push(Op::Label(empty));
        ops.push(Op::Plain(LD_IMM, 0));
        // X += 4 + length (A).
        ops.push(Op::Label(step));
        ops.push(Op::Plain(ADD_K, 4));
        ops.push(Op::Plain(ADD_X, 0));
        ops.push(Op::Plain(TAX, 0));
        ops.push(Op::Jump(JEQ, 0, pass_end, pass_end));
        ops.push(Op::Label(accept));
        ops.push(Op::Plain(RET_K, u32::MAX));
        ops.push(Op::Label(drop));
        ops.push(Op::Plain(RET_K, 0));
        ops.push(Op::Label(pass_end));
    }
    // More submessages than the filter reads: taken.
    ops.push(Op::Plain(RET_K, u32::MAX));
    assemble(&ops)
}

/// Puts the [`filter`] (the loopback interface only when `local`) on every UDP socket that
/// is not among `before` (the sockets from before the participant was built). Returns how
/// the sockets' inodes.
pub(crate) fn confine(
    before: &BTreeSet<u64>,
    local: bool,
    max_sample: u32,
) -> io::Result<BTreeSet<u64>> {
    let lo = if local { Some(loopback_index()?) } else { None };
    let filter = filter(lo, max_sample);
    let me = rustix::process::pidfd_open(
        rustix::process::getpid(),
        rustix::process::PidfdFlags::empty(),
    )?;
    let mut confined = BTreeSet::new();
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
        if socket.r#type()? == socket2::Type::DGRAM {
            socket.attach_filter(&filter)?;
            confined.insert(inode);
        }
    }
    Ok(confined)
}

/// The datagrams the kernel dropped so far on the sockets of `inodes` (`/proc/net/udp`'s
/// `drops`: those the filter refused, and those that found a full receive buffer).
pub(crate) fn drops(inodes: &BTreeSet<u64>) -> io::Result<u64> {
    let mut total = 0;
    for table in ["/proc/self/net/udp", "/proc/self/net/udp6"] {
        let text = match std::fs::read_to_string(table) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let inode = fields.get(9).and_then(|f| f.parse::<u64>().ok());
            if inode.is_some_and(|i| inodes.contains(&i)) {
                total += fields
                    .last()
                    .and_then(|f| f.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;

    /// An RTPS message (header, then `subs`), `tag` in its GUID prefix.
    fn message(tag: u8, subs: &[Vec<u8>]) -> Vec<u8> {
        let mut m = b"RTPS\x02\x04\x01\x0f".to_vec();
        m.extend([tag; 12]);
        for s in subs {
            m.extend(s);
        }
        m
    }

    /// A submessage: `id`, little endian or not, `body`.
    fn sub(id: u8, little: bool, body: &[u8]) -> Vec<u8> {
        let len = body.len() as u16;
        let mut s = vec![id, u8::from(little)];
        s.extend(if little {
            len.to_le_bytes()
        } else {
            len.to_be_bytes()
        });
        s.extend(body);
        s
    }

    /// A DATA_FRAG's body announcing a sample of `size` bytes, with one 8-byte fragment.
    fn frag(size: u32, little: bool) -> Vec<u8> {
        let mut b = vec![0u8; 24];
        let n = |v: u32| {
            if little {
                v.to_le_bytes()
            } else {
                v.to_be_bytes()
            }
        };
        b[16..20].copy_from_slice(&n(1));
        b.extend(if little {
            1u16.to_le_bytes()
        } else {
            1u16.to_be_bytes()
        });
        b.extend(if little {
            8u16.to_le_bytes()
        } else {
            8u16.to_be_bytes()
        });
        b.extend(n(size));
        b.extend([7u8; 8]);
        b
    }

    /// Sends each datagram to a socket with the filter (samples of at most 1000 bytes);
    /// returns the tags of those that arrived. The last one sent is an empty message that
    /// the filter takes: once it is read, nothing sent before it is still on its way.
    fn arrived(datagrams: &[Vec<u8>]) -> Vec<u8> {
        let to = UdpSocket::bind("127.0.0.1:0").expect("a socket");
        socket2::SockRef::from(&to)
            .attach_filter(&filter(Some(loopback_index().expect("lo")), 1000))
            .expect("the filter is taken");
        let from = UdpSocket::bind("127.0.0.1:0").expect("a socket");
        for d in datagrams {
            from.send_to(d, to.local_addr().unwrap()).unwrap();
        }
        from.send_to(&message(0xee, &[]), to.local_addr().unwrap())
            .unwrap();
        let mut got = Vec::new();
        let mut buf = vec![0u8; 70_000];
        loop {
            let n = to.recv(&mut buf).expect("a datagram");
            let tag = if n > 8 { buf[8] } else { 0 };
            if tag == 0xee {
                return got;
            }
            got.push(tag);
        }
    }

    #[test]
    fn large_fragmented_samples_are_dropped_and_the_rest_taken() {
        let info_ts = sub(0x09, true, &[0; 8]);
        let info_ts_empty = sub(0x09, true, &[]);
        let pad = sub(0x01, false, &[]);
        let data = sub(0x15, true, &[0; 40]);
        let heartbeat = sub(0x07, false, &[0; 28]);
        let sent = [
            message(1, &[sub(0x16, true, &frag(1000, true))]),
            message(2, &[sub(0x16, true, &frag(1001, true))]),
            message(3, &[sub(0x16, false, &frag(16_000_000, false))]),
            message(4, &[sub(0x16, false, &frag(999, false))]),
            message(5, &[info_ts.clone(), data.clone(), heartbeat.clone()]),
            message(
                6,
                &[info_ts.clone(), sub(0x16, true, &frag(u32::MAX, true))],
            ),
            message(
                7,
                &[
                    info_ts_empty,
                    pad.clone(),
                    sub(0x16, true, &frag(5000, true)),
                ],
            ),
            message(8, &vec![pad.clone(); MAX_SUBMESSAGES + 10]),
            message(
                9,
                &[
                    vec![pad.clone(); MAX_SUBMESSAGES - 1],
                    vec![sub(0x16, true, &frag(5000, true))],
                ]
                .concat(),
            ),
            message(10, &[data.clone(), sub(0x16, true, &frag(1 << 20, true))]),
            // A last submessage of length 0 runs to the end: what follows is its body.
            message(11, &[sub(0x15, true, &[]), frag(1 << 20, true)]),
            // Past the submessages the filter reads: taken (the residual the guide states).
            message(
                12,
                &[
                    vec![pad.clone(); MAX_SUBMESSAGES],
                    vec![sub(0x16, true, &frag(5000, true))],
                ]
                .concat(),
            ),
        ];
        assert_eq!(arrived(&sent), [1, 4, 5, 8, 11, 12]);
    }
}
