//! TUN devices (Linux), opened with one `ioctl(TUNSETIFF)` on `/dev/net/tun`.
//!
//! Written on `libc` directly rather than with a TUN crate: the emulator needs only
//! open + TUNSETIFF + non-blocking read/write on a raw fd that it polls itself in its own
//! loop; the maintained crates (`tun`, `tun-rs`) add async runtimes or address configuration
//! that `ip` does here (in the namespace the device is moved to), and `tun-tap` is unmaintained.
//!
//! The device is not persistent: it disappears when the emulator exits, whichever namespace it
//! has been moved to, so a crash leaves no device behind.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// linux/if_tun.h: `#define TUNSETIFF _IOW('T', 202, int)`.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
/// linux/if_tun.h: a layer-3 device (IP packets, no Ethernet header).
const IFF_TUN: libc::c_short = 0x0001;
/// linux/if_tun.h: no 4-byte packet-information prefix; a read gives exactly one IP packet.
const IFF_NO_PI: libc::c_short = 0x1000;
/// linux/if.h: `IFNAMSIZ`, including the terminating NUL.
pub const IFNAMSIZ: usize = 16;
/// Where the TUN/TAP driver lives.
pub const TUN_PATH: &str = "/dev/net/tun";

/// `struct ifreq` as TUNSETIFF reads it: the name, then the flags in the union (40 bytes).
#[repr(C)]
struct IfReq {
    name: [libc::c_char; IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Why a device could not be made, in the words the user needs.
#[derive(Debug)]
pub enum TunError {
    /// No /dev/net/tun (no tun module, or a container without the device).
    NoDevice(io::Error),
    /// Not root, no CAP_NET_ADMIN.
    NotPermitted(io::Error),
    BadName(String),
    Other(io::Error),
}

impl std::fmt::Display for TunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TunError::NoDevice(e) => write!(f, "cannot open {TUN_PATH} ({e}): the emulator needs the TUN driver (modprobe tun; in a container, pass --device /dev/net/tun)"),
            TunError::NotPermitted(e) => write!(f, "cannot create a TUN device ({e}): the emulator needs root or CAP_NET_ADMIN"),
            TunError::BadName(n) => write!(f, "bad TUN device name {n:?}: 1 to {} characters, no '/', no spaces", IFNAMSIZ - 1),
            TunError::Other(e) => write!(f, "cannot create a TUN device: {e}"),
        }
    }
}

pub struct Tun {
    fd: OwnedFd,
    pub name: String,
}

impl Tun {
    /// Creates the TUN device `name` (IFF_TUN | IFF_NO_PI) in the current network namespace,
    /// non-blocking.
    pub fn create(name: &str) -> Result<Tun, TunError> {
        if name.is_empty() || name.len() >= IFNAMSIZ || name.contains(['/', ' ', '\0']) {
            return Err(TunError::BadName(name.into()));
        }
        let path = CString::new(TUN_PATH).expect("no NUL");
        // SAFETY: a plain open(2) of a NUL-terminated path.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::ENOENT) | Some(libc::ENXIO) | Some(libc::ENODEV) => TunError::NoDevice(e),
                Some(libc::EACCES) | Some(libc::EPERM) => TunError::NotPermitted(e),
                _ => TunError::Other(e),
            });
        }
        // SAFETY: fd was just opened and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut req = IfReq { name: [0; IFNAMSIZ], flags: IFF_TUN | IFF_NO_PI, _pad: [0; 22] };
        for (d, s) in req.name.iter_mut().zip(name.bytes()) {
            *d = s as libc::c_char;
        }
        // SAFETY: TUNSETIFF reads a struct ifreq, which IfReq lays out (repr(C), 40 bytes).
        let rc = unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req as *mut IfReq) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::EPERM) | Some(libc::EACCES) => TunError::NotPermitted(e),
                _ => TunError::Other(e),
            });
        }
        Ok(Tun { fd, name: name.into() })
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// One packet into `buf`; `Ok(None)` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: buf is valid for buf.len() bytes.
        let n = unsafe { libc::read(self.raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock => Ok(None),
            io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        }
    }

    /// Writes one packet (the kernel receives it as if it had arrived on the device).
    pub fn send(&self, packet: &[u8]) -> io::Result<()> {
        // SAFETY: packet is valid for packet.len() bytes.
        let n = unsafe { libc::write(self.raw_fd(), packet.as_ptr().cast(), packet.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}
