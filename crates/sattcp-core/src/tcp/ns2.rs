//! The `ns2` compatibility switches (issue 11): behaviours of ns-2's one-way TCP agents that
//! our defaults do not share, each settable alone (`[tcp.ns2]` in a scenario) or all at once
//! as the profile that ns-2.35's `test-suite-tcpVariants.tcl` uses (`tcp.profile = "ns2"`).
//! With every switch at its default the TCP behaves as before the switches existed (the
//! snapshot and the 72 study digests are unchanged). Each switch names the ns-2 variable it
//! mirrors; docs/tcp.md describes them.

use super::config::TcpConfig;
use crate::time::SimTime;

/// When a fast retransmit is refused because an earlier loss is still being recovered from
/// (ns-2 `bugFix_`; RFC 2582 §3 "bugfix"; RFC 6582 §3.2 step 2).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BugFix {
    /// Ours before the switches: only a retransmission timeout blocks fast retransmit until
    /// its RECOVER is acknowledged (no ns-2 setting behaves so for Reno).
    TimeoutOnly,
    /// ns-2 `bugFix_ true`: a fast retransmit or a timeout sets RECOVER = highest sent, and
    /// three duplicates below it do nothing (Sack1 clears RECOVER when its recovery ends).
    On,
    /// ns-2 `bugFix_ false`: every third duplicate ACK fast-retransmits.
    Off,
    /// ns-3.44's test (`TcpSocketBase::DupAck`: recovery on the third duplicate if
    /// `m_highRxAckMark >= m_recover || !m_recoverActive`, a timeout having set `m_recover =
    /// m_highTxMark`, one past the highest byte sent): as `TimeoutOnly`, but a timeout's
    /// RECOVER is passed as soon as everything sent before it is acknowledged (`snd_una >=
    /// RECOVER`), where RFC 6582 §3.2 step 1 and ns-2 wait for an ACK that covers more. The
    /// duplicates drawn by go-back-N's needless retransmissions, which acknowledge exactly
    /// RECOVER, then start a fast retransmit (bench/README.md, "ns-3 at GEO").
    Ns3,
}

/// The switches. `Default` is our behaviour; [`Ns2Compat::ns235`] is ns-2.35's.
#[derive(Clone, Debug, PartialEq)]
pub struct Ns2Compat {
    /// cwnd kept in fractional packets as ns-2's `double cwnd_`: +1 per ACK in slow start,
    /// `+increase_num_/cwnd_` (1/cwnd) per ACK in congestion avoidance (`windowOption_ 1`);
    /// the usable window is its integer part. Off: bytes, MSS*MSS/cwnd rounded down.
    pub window_arith: bool,
    /// ns-2 `bugFix_` (see [`BugFix`]).
    pub bug_fix: BugFix,
    /// ns-2 `exitFastRetrans_` (true in ns-2.35): the window is inflated by duplicate ACKs only
    /// in a fast recovery actually entered; a fast retransmit refused by `bugFix_` inflates
    /// nothing. Off (ns-2.1b3): `dupwnd_ = 3` even when refused.
    pub exit_fast_retrans: bool,
    /// ns-2 NewReno `newreno_changes_`: 1 (ours, Hoe's flywheel as in ns-2.1b3: in fast
    /// recovery only one new segment per two duplicates, the window sends nothing); 0 (ns-2.35's
    /// default): the inflated window sends, at most 2 segments per ACK (`send_much(0, 0, 2)`).
    pub newreno_changes: u8,
    /// ns-2 NewReno `newreno_changes1_`: only the first partial ACK restarts the timer.
    pub newreno_changes1: bool,
    /// ns-2 NewReno `partial_window_deflation_` (RFC 2582): a partial ACK deflates the
    /// inflation by the data it acknowledges, less one segment.
    pub partial_window_deflation: bool,
    /// ns-2 NewReno `exit_recovery_fix_`: on leaving fast recovery cwnd = min(ssthresh,
    /// outstanding).
    pub exit_recovery_fix: bool,
    /// ns-2 `singledup_` (RFC 3042 limited transmit): the first and second duplicate ACKs each
    /// send one new segment if `t_seqno_ <= highest_ack_ + cwnd_ + dupacks_`.
    pub singledup: bool,
    /// ns-2 Sack1 `oldCode_`: PIPE at the fast retransmit = cwnd - 3 (ours, the seed's text);
    /// false (ns-2.35): PIPE = packets outstanding - 3.
    pub sack_old_code: bool,
    /// ns-2 Sack1's `if (scb_->CheckUpdate())`: outside fast recovery a duplicate ACK counts
    /// only if its SACK blocks report data not SACKed before (a duplicate caused by a
    /// needlessly retransmitted segment does not). Off: every duplicate ACK counts.
    pub sack_dupack_needs_news: bool,
    /// ns-2 `rfc2988_`: an RTO below `minrto_` is raised to it before the backoff multiplies
    /// (`minrto_ * t_backoff_`); off: the backed-off RTO is floored at `min_rto`.
    pub rfc2988_rto: bool,
    /// ns-2 `timeout()` on a lost SYN: ns-2 takes the SYN for a lost packet 0 sent in a window
    /// of one, so ssthresh_ = max(int(1/2), 2) = 2 packets and the connection starts in
    /// congestion avoidance after the SYN-ACK's window of one (`wnd_init_ = 1`, RFC 5681 §3.1,
    /// which every profile has). Off: a lost SYN keeps `initial_ssthresh`.
    pub syn_timeout_ssthresh: bool,
    /// ns-2 `boot_time_`: the phase of the RTT tick grid (ns-2 draws it at random per agent,
    /// `Random::uniform(tcpTick_)`; here it is given, 0 = ticks at multiples of the granularity;
    /// the profile's is ns-2's draw for the suites' sender, [`Ns2Compat::boot_time`]).
    pub tick_phase: SimTime,
    /// ns-2's `boot_time_` drawn per sender (`Random::uniform(tcp_tick_)`), uniform in [0, tick)
    /// from the run's stream `tcp/boot_time` in flow order, instead of `tick_phase`.
    pub random_tick_phase: bool,
    /// ns-2's SACK sink adds 8 bytes per SACK block to the ACK's size (`ch->size() +=
    /// sack_index * 8`); off: every ACK is 40 bytes.
    pub sack_option_bytes: bool,
    /// ns-2 `precisionReduce_` (ns-2.35's default, which test-suite-tcpVariants.tcl turns off):
    /// a fast retransmit halves the fractional window, `cwnd_ = windowd() / 2`; off: the whole
    /// packets of the window, `cwnd_ = int(window() / 2)`. Needs `window_arith`.
    pub precision_reduce: bool,
    /// ns-2 `DropTail` limit N: N - 1 packets wait and one is in service (`q_->length() + 1 >=
    /// qlim_` drops); off: N packets wait besides the one in service.
    pub drop_tail_ns2: bool,
}

impl Default for Ns2Compat {
    fn default() -> Self {
        Ns2Compat {
            window_arith: false,
            bug_fix: BugFix::TimeoutOnly,
            exit_fast_retrans: false,
            newreno_changes: 1,
            newreno_changes1: false,
            partial_window_deflation: false,
            exit_recovery_fix: false,
            singledup: false,
            sack_old_code: true,
            sack_dupack_needs_news: false,
            rfc2988_rto: false,
            syn_timeout_ssthresh: false,
            tick_phase: SimTime::ZERO,
            random_tick_phase: false,
            sack_option_bytes: false,
            precision_reduce: false,
            drop_tail_ns2: false,
        }
    }
}

/// ns-2.35's `boot_time_` as a fraction of `tcpTick_` for a script with one TCP sender and
/// the default seed: `TcpAgent::reset()` draws `boot_time_ = Random::uniform(tcp_tick_)` from
/// ns-2's default RNG when the agent is created and again when `$ns run` resets every agent,
/// so the sender of the suites runs with the second draw of the unseeded default RNG, whose
/// first outputs are 0.0003395769746692744, 0.55588071586372367, 0.014204660437165137
/// (measured with ns-2.35: `puts [$defaultRNG uniform 0 1]` after `new Agent/TCP` gives the
/// second, after `$ns run` the third). With N senders, agent k's phase is draw N + its reset
/// order; one value for every flow here.
pub const NS235_BOOT_FRACTION: f64 = 0.555_880_715_863_723_7;
/// ns-2.35 `tcpTick_ 0.01`.
pub const NS235_TICK: SimTime = SimTime::from_millis(10);
/// test-suite-tcpVariants.tcl: `Agent/TCP set minrto_ 1`.
pub const NS235_SUITE_MIN_RTO: SimTime = SimTime::from_secs(1);
/// test-suite-tcpVariants.tcl: `Agent/TCP set rtxcur_init_ 6.0`.
pub const NS235_SUITE_INITIAL_RTO: SimTime = SimTime::from_secs(6);
/// ns-2.35's default `rtxcur_init_ 3.0` (suites that do not set it, e.g. test-suite-sack.tcl).
pub const NS235_DEFAULT_INITIAL_RTO: SimTime = SimTime::from_secs(3);
/// ns-2.35 `maxrto_ 60`.
pub const NS235_MAX_RTO: SimTime = SimTime::from_secs(60);
/// ns-2.35 `windowInit_ 2`.
pub const NS235_INITIAL_WINDOW: u32 = 2;

impl Ns2Compat {
    /// ns-2.35's agents as `test-suite-tcpVariants.tcl` configures them (`bugFix_ true`,
    /// `exitFastRetrans_ true`, `newreno_changes_ 0`, `newreno_changes1_ 0`,
    /// `partial_window_deflation_ 0`, `singledup_ 0`, `oldCode_ false`, `rfc2988_ true`,
    /// `precisionReduce_ false`; a lost SYN cuts ssthresh_ as `timeout()` does).
    pub fn ns235() -> Self {
        Ns2Compat {
            window_arith: true,
            bug_fix: BugFix::On,
            exit_fast_retrans: true,
            newreno_changes: 0,
            newreno_changes1: false,
            partial_window_deflation: false,
            exit_recovery_fix: false,
            singledup: false,
            sack_old_code: false,
            sack_dupack_needs_news: true,
            rfc2988_rto: true,
            syn_timeout_ssthresh: true,
            tick_phase: Ns2Compat::boot_time(NS235_TICK),
            random_tick_phase: false,
            sack_option_bytes: true,
            precision_reduce: false,
            drop_tail_ns2: true,
        }
    }

    /// ns-2's `boot_time_` for a clock of `tick` (the suites' single sender, see
    /// [`NS235_BOOT_FRACTION`]), to the nanosecond below.
    pub fn boot_time(tick: SimTime) -> SimTime {
        SimTime((NS235_BOOT_FRACTION * tick.as_nanos() as f64) as u64)
    }

    /// `cfg` for one sender: with `random_tick_phase`, its `tick_phase` drawn from `rng`
    /// (uniform in [0, tick), as ns-2's `boot_time_`); otherwise `cfg` as it is.
    pub fn with_random_tick_phase(cfg: &TcpConfig, rng: &mut crate::engine::rng::Rng) -> TcpConfig {
        let mut c = cfg.clone();
        if c.ns2.random_tick_phase {
            c.ns2.tick_phase = SimTime(rng.below(c.timer_granularity.as_nanos().max(1)));
        }
        c
    }

    /// `cfg` with the ns-2.35 switches and the suite's timer settings (`tcpTick_ 0.01`,
    /// `minrto_ 1`, `rtxcur_init_ 6`, `maxrto_ 60`, `windowInit_ 2`, slow-start restart).
    pub fn profile_ns235(mut cfg: TcpConfig) -> TcpConfig {
        cfg.ns2 = Ns2Compat::ns235();
        cfg.timer_granularity = NS235_TICK;
        cfg.min_rto = NS235_SUITE_MIN_RTO;
        cfg.initial_rto = NS235_SUITE_INITIAL_RTO;
        cfg.max_rto = NS235_MAX_RTO;
        cfg.initial_cwnd = NS235_INITIAL_WINDOW;
        cfg.slow_start_restart = true;
        cfg.delayed_ack = false;
        cfg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::RngFactory;

    #[test]
    fn random_tick_phase_draws_one_phase_per_sender_within_the_tick() {
        let mut cfg = TcpConfig { timer_granularity: SimTime::from_millis(100), ..Default::default() };
        let mut rng = RngFactory::new(1).stream("tcp/boot_time");
        // Off: the configured phase, nothing drawn.
        cfg.ns2.tick_phase = SimTime::from_millis(3);
        assert_eq!(Ns2Compat::with_random_tick_phase(&cfg, &mut rng).ns2.tick_phase, SimTime::from_millis(3));
        cfg.ns2.random_tick_phase = true;
        let phases: Vec<SimTime> = (0..100).map(|_| Ns2Compat::with_random_tick_phase(&cfg, &mut rng).ns2.tick_phase).collect();
        assert!(phases.iter().all(|&p| p < cfg.timer_granularity), "{phases:?}");
        let mut distinct = phases.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 100, "one draw per sender");
        // Spread over the tick: some in each half.
        assert!(phases.iter().any(|&p| p < SimTime::from_millis(50)) && phases.iter().any(|&p| p >= SimTime::from_millis(50)));
        // Deterministic: the same stream gives the same phases.
        let mut again = RngFactory::new(1).stream("tcp/boot_time");
        let _ = Ns2Compat::with_random_tick_phase(&TcpConfig::default(), &mut again);
        assert_eq!(Ns2Compat::with_random_tick_phase(&cfg, &mut again).ns2.tick_phase, phases[0]);
    }
}
