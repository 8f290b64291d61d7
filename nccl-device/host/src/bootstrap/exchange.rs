//! Rank 0 hands NCCL's unique id to every other rank over TCP, and every rank learns
//! where the others run (host and GPU). Every step has a deadline: a rank that never
//! connects, or dies mid-exchange, makes the others fail instead of hang.
//!
//! Wire format (little-endian): each rank > 0 connects to `MASTER_ADDR:MASTER_PORT`
//! and sends `MAGIC, rank u32, world u32, device u32, host_len u16, host`; rank 0
//! answers each with `MAGIC, id[128], world u32` then `world` times `device u32,
//! host_len u16, host`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::env::BootstrapEnv;
use super::host_name;
use crate::error::{NcclError, Result};
use crate::loaded::UniqueId;
use crate::safe::PeerInfo;
use crate::sys::NCCL_UNIQUE_ID_BYTES;

const MAGIC: &[u8; 8] = b"CJNCCL01";

/// What every rank knows after the exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchanged {
    /// Rank 0's unique id.
    pub unique_id: UniqueId,
    /// Every rank's host and device, by rank.
    pub peers: Vec<PeerInfo>,
}

/// Runs the exchange for `env.rank`; rank 0 calls `make_id` once. Fails after
/// `timeout` if any rank is missing.
pub fn exchange(
    env: &BootstrapEnv,
    device: usize,
    make_id: impl FnOnce() -> Result<UniqueId>,
    timeout: Duration,
) -> Result<Exchanged> {
    let deadline = Instant::now() + timeout;
    let me = PeerInfo {
        rank: env.rank as i32,
        host: host_name(),
        device,
    };
    if env.rank == 0 {
        serve(env, me, make_id, deadline)
    } else {
        join(env, me, deadline)
    }
}

fn err(msg: String) -> NcclError {
    NcclError::Bootstrap(msg)
}

fn remaining(deadline: Instant, what: &str) -> Result<Duration> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| err(format!("timed out {what}")))
}

fn serve(
    env: &BootstrapEnv,
    me: PeerInfo,
    make_id: impl FnOnce() -> Result<UniqueId>,
    deadline: Instant,
) -> Result<Exchanged> {
    let addr = (env.master_addr.as_str(), env.master_port);
    let listener = TcpListener::bind(addr).map_err(|e| {
        err(format!(
            "rank 0 cannot listen on {}:{}: {e} (another job on MASTER_PORT?)",
            env.master_addr, env.master_port
        ))
    })?;
    listener
        .set_nonblocking(true)
        .map_err(|e| err(format!("listener: {e}")))?;
    let id = make_id()?;
    let mut peers: Vec<Option<PeerInfo>> = vec![None; env.world_size];
    peers[0] = Some(me);
    let mut streams = Vec::new();
    while streams.len() + 1 < env.world_size {
        let missing = || {
            let m: Vec<String> = (0..env.world_size)
                .filter(|&r| peers[r].is_none())
                .map(|r| r.to_string())
                .collect();
            m.join(", ")
        };
        match listener.accept() {
            Ok((mut stream, _)) => {
                stream
                    .set_nonblocking(false)
                    .map_err(|e| err(format!("socket: {e}")))?;
                let left = remaining(deadline, &format!("waiting for ranks {}", missing()))?;
                stream.set_read_timeout(Some(left)).ok();
                let peer = read_hello(&mut stream, env.world_size)?;
                let r = peer.rank as usize;
                if peers[r].is_some() {
                    return Err(err(format!(
                        "rank {r} connected twice (two jobs on one port?)"
                    )));
                }
                peers[r] = Some(peer);
                streams.push(stream);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                remaining(
                    deadline,
                    &format!(
                        "waiting for ranks {} to connect to {}:{}",
                        missing(),
                        env.master_addr,
                        env.master_port
                    ),
                )?;
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(err(format!("accept: {e}"))),
        }
    }
    let peers: Vec<PeerInfo> = peers.into_iter().flatten().collect();
    let mut reply = Vec::new();
    reply.extend_from_slice(MAGIC);
    reply.extend_from_slice(&id.0);
    reply.extend_from_slice(&(peers.len() as u32).to_le_bytes());
    for p in &peers {
        reply.extend_from_slice(&(p.device as u32).to_le_bytes());
        put_text(&mut reply, &p.host);
    }
    for mut s in streams {
        s.write_all(&reply)
            .map_err(|e| err(format!("sending the unique id: {e}")))?;
    }
    Ok(Exchanged {
        unique_id: id,
        peers,
    })
}

fn join(env: &BootstrapEnv, me: PeerInfo, deadline: Instant) -> Result<Exchanged> {
    let target = format!("{}:{}", env.master_addr, env.master_port);
    let mut stream = loop {
        let addrs: Vec<_> = target
            .to_socket_addrs()
            .map_err(|e| err(format!("MASTER_ADDR {target}: {e}")))?
            .collect();
        let left = remaining(deadline, &format!("connecting to rank 0 at {target}"))?;
        let attempt = addrs
            .iter()
            .find_map(|a| TcpStream::connect_timeout(a, left.min(Duration::from_secs(1))).ok());
        if let Some(s) = attempt {
            break s;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut hello = Vec::new();
    hello.extend_from_slice(MAGIC);
    hello.extend_from_slice(&(me.rank as u32).to_le_bytes());
    hello.extend_from_slice(&(env.world_size as u32).to_le_bytes());
    hello.extend_from_slice(&(me.device as u32).to_le_bytes());
    put_text(&mut hello, &me.host);
    stream
        .write_all(&hello)
        .map_err(|e| err(format!("sending to rank 0: {e}")))?;
    let left = remaining(deadline, "waiting for the unique id")?;
    stream.set_read_timeout(Some(left)).ok();
    let what = "the unique id from rank 0 (did rank 0 or another rank die?)";
    expect_magic(&mut stream, what)?;
    let mut id = [0u8; NCCL_UNIQUE_ID_BYTES];
    read_exact(&mut stream, &mut id, what)?;
    let n = read_u32(&mut stream, what)? as usize;
    if n != env.world_size {
        return Err(err(format!(
            "rank 0 reports WORLD_SIZE {n}, this rank {}",
            env.world_size
        )));
    }
    let mut peers = Vec::with_capacity(n);
    for rank in 0..n {
        let device = read_u32(&mut stream, what)? as usize;
        let host = read_text(&mut stream, what)?;
        peers.push(PeerInfo {
            rank: rank as i32,
            host,
            device,
        });
    }
    Ok(Exchanged {
        unique_id: UniqueId(id),
        peers,
    })
}

fn read_hello(stream: &mut TcpStream, world: usize) -> Result<PeerInfo> {
    let what = "a rank's hello";
    expect_magic(stream, what)?;
    let rank = read_u32(stream, what)? as usize;
    let their_world = read_u32(stream, what)? as usize;
    let device = read_u32(stream, what)? as usize;
    let host = read_text(stream, what)?;
    if their_world != world || rank == 0 || rank >= world {
        return Err(err(format!(
            "a process says RANK={rank} WORLD_SIZE={their_world}; rank 0 has WORLD_SIZE={world}"
        )));
    }
    Ok(PeerInfo {
        rank: rank as i32,
        host,
        device,
    })
}

fn put_text(buf: &mut Vec<u8>, text: &str) {
    let bytes = &text.as_bytes()[..text.len().min(u16::MAX as usize)];
    buf.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
    buf.extend_from_slice(bytes);
}

fn read_exact(stream: &mut TcpStream, buf: &mut [u8], what: &str) -> Result<()> {
    stream
        .read_exact(buf)
        .map_err(|e| err(format!("reading {what}: {e}")))
}

fn expect_magic(stream: &mut TcpStream, what: &str) -> Result<()> {
    let mut m = [0u8; 8];
    read_exact(stream, &mut m, what)?;
    if &m != MAGIC {
        return Err(err(format!("{what}: not a cudajit-nccl peer (bad magic)")));
    }
    Ok(())
}

fn read_u32(stream: &mut TcpStream, what: &str) -> Result<u32> {
    let mut b = [0u8; 4];
    read_exact(stream, &mut b, what)?;
    Ok(u32::from_le_bytes(b))
}

fn read_text(stream: &mut TcpStream, what: &str) -> Result<String> {
    let mut l = [0u8; 2];
    read_exact(stream, &mut l, what)?;
    let mut s = vec![0u8; u16::from_le_bytes(l) as usize];
    read_exact(stream, &mut s, what)?;
    Ok(String::from_utf8_lossy(&s).into_owned())
}
