//! `sattcp-emu`: the link emulator's program.
//!
//! ```text
//! sattcp-emu check SCENARIO [--set PATH=VALUE]...   validated config as JSON; on bad input
//!                                                    {"problems": [...]} and exit 2
//! sattcp-emu run SCENARIO [--set PATH=VALUE]... --tun-a NAME --tun-b NAME [--stats FILE]
//! ```
//!
//! `run` creates the two TUN devices in its own namespace, prints `ready` on stdout, and then
//! forwards packets between them until SIGTERM/SIGINT/SIGHUP (or its parent dies), when it
//! prints its counters as one JSON line on stdout (and writes them to FILE). Meanwhile the
//! caller (`sattcp emulate`) moves the devices into the two namespaces and configures them.
//!
//! One thread: a deadline loop around `ppoll(2)` on the two devices, whose timeout is the
//! arrival time of the next packet due (nanosecond timespec, timer slack set to 1 ns); no
//! timer or sleep per packet. Signals are blocked except inside `ppoll`, so a stop request is
//! never lost between a check and the wait.

use sattcp_core::scenario::parse_override_value;
use sattcp_core::SimTime;
use sattcp_emu::config::{self, EmuConfig};
use sattcp_emu::model::{Dir, Emulator};
use sattcp_emu::tun::{Tun, TunError};
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Exit status for bad input and missing privileges (as the `sattcp` CLI).
const EXIT_BAD_INPUT: u8 = 2;
const EXIT_FAILED: u8 = 1;
/// Largest IP packet a TUN device can hand over.
const MAX_PACKET: usize = 65_536;
/// Most packets read from one device before due packets are written again, so that a flood on
/// one side does not delay deliveries (a read takes about a microsecond).
const READ_BATCH: usize = 64;

/// SCHED_FIFO priority (1..99): above ordinary processes, below the kernel's own threads (50).
const RT_PRIORITY: libc::c_int = 10;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

const USAGE: &str = "usage: sattcp-emu check SCENARIO [--set PATH=VALUE]...\n       sattcp-emu run SCENARIO [--set PATH=VALUE]... --tun-a NAME --tun-b NAME [--stats FILE]";

struct Args {
    command: String,
    scenario: String,
    overrides: Vec<(String, toml::Value)>,
    tun_a: Option<String>,
    tun_b: Option<String>,
    stats: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let command = it.next().ok_or("missing command")?;
    if command != "check" && command != "run" {
        return Err(format!("unknown command {command:?}"));
    }
    let mut a = Args { command, scenario: String::new(), overrides: vec![], tun_a: None, tun_b: None, stats: None };
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "--set" => {
                let v = value("--set")?;
                let (k, val) = v.split_once('=').ok_or(format!("--set takes PATH=VALUE, got {v:?}"))?;
                a.overrides.push((k.trim().to_string(), parse_override_value(val.trim())));
            }
            "--tun-a" => a.tun_a = Some(value("--tun-a")?),
            "--tun-b" => a.tun_b = Some(value("--tun-b")?),
            "--stats" => a.stats = Some(value("--stats")?),
            s if s.starts_with('-') => return Err(format!("unknown option {s:?}")),
            s if a.scenario.is_empty() => a.scenario = s.to_string(),
            s => return Err(format!("unexpected argument {s:?}")),
        }
    }
    if a.scenario.is_empty() {
        return Err("missing SCENARIO".into());
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("sattcp-emu: {e}\n{USAGE}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let text = match std::fs::read_to_string(&args.scenario) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("sattcp-emu: cannot read {}: {e}", args.scenario);
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let cfg = match config::load(&text, &args.overrides) {
        Ok(c) => c,
        Err(e) => {
            eprint!("sattcp-emu: {}: {e}", args.scenario);
            if args.command == "check" {
                // For `sattcp emulate`: the problems as data ({path, rule, got}).
                println!("{}", serde_json::json!({ "problems": e.problems }));
            }
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    if args.command == "check" {
        println!("{}", serde_json::to_string(&cfg).expect("serialisable"));
        return ExitCode::SUCCESS;
    }
    let (Some(a), Some(b)) = (&args.tun_a, &args.tun_b) else {
        eprintln!("sattcp-emu: run needs --tun-a and --tun-b\n{USAGE}");
        return ExitCode::from(EXIT_BAD_INPUT);
    };
    let devices = Tun::create(a).and_then(|ta| Tun::create(b).map(|tb| (ta, tb)));
    let (ta, tb) = match devices {
        Ok(d) => d,
        Err(e) => {
            eprintln!("sattcp-emu: {e}");
            let code = match e {
                TunError::NoDevice(_) | TunError::NotPermitted(_) | TunError::BadName(_) => EXIT_BAD_INPUT,
                TunError::Other(_) => EXIT_FAILED,
            };
            return ExitCode::from(code);
        }
    };
    match run(&cfg, &ta, &tb, args.stats.as_deref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sattcp-emu: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// Blocks the stop signals (they are taken only inside ppoll) and returns the mask to use there.
fn setup_process() -> libc::sigset_t {
    // SAFETY: plain libc calls on local, initialised sigsets and a handler that only stores an
    // atomic (async-signal-safe).
    unsafe {
        let mut block: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut block);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut block, s);
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(s, &act, std::ptr::null_mut());
        }
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigprocmask(libc::SIG_BLOCK, &block, &mut old);
        // Stop when the parent (sattcp emulate) dies, whatever the reason: the devices go too.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong);
        // The kernel may otherwise fire a timer up to 50 us late to batch wake-ups (the default
        // timer slack); 1 ns asks for the deadline as given.
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
        // Real-time priority when allowed (root): the wake-up at a packet's deadline then does
        // not wait behind other processes' time slices on a busy machine. Best effort.
        let param = libc::sched_param { sched_priority: RT_PRIORITY };
        libc::sched_setscheduler(0, libc::SCHED_FIFO, &param);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigdelset(&mut old, s);
        }
        old
    }
}

fn run(cfg: &EmuConfig, ta: &Tun, tb: &Tun, stats_path: Option<&str>) -> std::io::Result<()> {
    let wait_mask = setup_process();
    let mut emu = Emulator::new(cfg);
    let start = Instant::now();
    let clock = || SimTime(start.elapsed().as_nanos() as u64);
    println!("ready");
    std::io::stdout().flush()?;

    let mut buf = vec![0u8; MAX_PACKET];
    let mut write_errors = 0u64;
    // Packets read on device A travel A -> B, and the other way.
    let devices = [(ta, Dir::AtoB), (tb, Dir::BtoA)];
    let out = |d: Dir| if d == Dir::AtoB { tb } else { ta };
    while !STOP.load(Ordering::SeqCst) {
        let now = clock();
        while let Some((dir, packet, due)) = emu.pop_due(now) {
            if out(dir).send(&packet).is_err() {
                // The device is down or its namespace gone: the packet is lost, as on a real link.
                write_errors += 1;
            }
            emu.record_delivery(dir, due, clock());
        }
        let timeout = emu.poll_at().map(|t| {
            let ns = t.saturating_sub(clock()).as_nanos();
            libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long }
        });
        let mut fds = [
            libc::pollfd { fd: ta.raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: tb.raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        // SAFETY: fds is a valid array of 2 pollfd; the timespec and mask outlive the call.
        let rc = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, timeout.as_ref().map_or(std::ptr::null(), |t| t as *const _), &wait_mask) };
        if rc < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        for (pfd, (dev, dir)) in fds.iter().zip(devices) {
            if pfd.revents & (libc::POLLERR | libc::POLLNVAL) != 0 {
                return Err(std::io::Error::other(format!("device {} failed", dev.name)));
            }
            if pfd.revents & libc::POLLIN == 0 {
                continue;
            }
            for _ in 0..READ_BATCH {
                let Some(n) = dev.recv(&mut buf)? else { break };
                // One allocation per packet: at the rates emulated (up to some hundreds of Mbps)
                // this costs far less than the system calls around it.
                emu.offer(dir, clock(), buf[..n].to_vec());
            }
        }
    }
    let end = clock();
    let stats = emu.stats(end);
    let doc = serde_json::json!({
        "name": cfg.name,
        "config": cfg,
        "duration_s": end.as_secs_f64(),
        "write_errors": write_errors,
        "directions": stats,
    });
    let line = serde_json::to_string(&doc).expect("serialisable");
    if let Some(p) = stats_path {
        std::fs::write(p, format!("{line}\n"))?;
    }
    println!("{line}");
    Ok(())
}
