//! SACK recovery exactly as seed 001 §2.2.1 describes it (Fall and Floyd 1996; ns-2.1b3
//! `Sack1TcpAgent` with `oldCode_`):
//!
//! - third duplicate ACK: retransmit the first unacknowledged segment, PIPE = CWND - 3
//!   segments (CWND before the cut), CWND halved, SSTHRESH = CWND, RECOVER = highest sent;
//! - in the fast-retransmit phase every ACK decrements PIPE by one segment, a partial ACK by
//!   two (the retransmission left, and the original it replaced is now known to be lost);
//!   a partial ACK also restarts the timer and clears the backoff;
//! - while PIPE < CWND the sender sends, holes first (the first segment below the highest
//!   SACKed one that is neither SACKed nor already retransmitted), then new data within the
//!   receiver's window; each segment sent adds one to PIPE (the fast retransmission itself
//!   does not: ns-2 sends it outside the PIPE accounting);
//! - the ACK of RECOVER ends the phase with CWND = SSTHRESH (no growth on that ACK);
//! - a retransmission is sent once per phase: if it is lost, the timer fires, the SACK table
//!   is reset and the sender slow-starts (seed 001 §2.2.1).
//!
//! Outside the phase ns-2 forgot SACK information at every new ACK (`ClearScoreBoard()`);
//! we do the same, except under a controller that keeps its window through losses (BBR,
//! `Cc::keeps_sack_info`): there the table keeps what the receiver reported until the
//! cumulative ACK passes it, across phases and timeouts, as Linux does. (A receiver reports
//! at most 3-4 blocks per ACK; with the hundreds of holes a BBR window holds under random loss,
//! a forgotten table made the next phase resend as "holes" thousands of segments the receiver
//! had: issue 14.)
//!
//! Under BBR two more of Linux's rules replace ns-2's (docs/leo.md, "The multi-flow cells
//! against the kernel"): the phase starts when RACK has marked a segment lost
//! ([`SackFallFloyd::enter_on_lost`], Linux `tcp_time_to_recover()`), not on the third
//! duplicate ACK and not barred by a timeout's RECOVER; and PIPE is Linux's
//! `tcp_packets_in_flight()` from the scoreboard's marks ([`SackFallFloyd::pick`]).

use super::{CongState, Cx, Gate, Out, Pick, TimerAction};

/// seed 001 §2.2.1: "PIPE is set to the value of CWND - 3 segments".
const PIPE_DUPACKS: i64 = 3;
/// seed 001 §2.2.1: "When a partial ACK is received, PIPE is decremented by two".
const PIPE_PARTIAL_ACK_DECREMENT: i64 = 2;

#[derive(Clone, Debug, Default)]
pub struct SackFallFloyd {
    /// PIPE in segments.
    pub pipe: i64,
}

impl SackFallFloyd {
    pub fn on_new_ack(&mut self, cx: &mut Cx, out: &mut Out) {
        let keep = cx.cc.keeps_sack_info();
        if cx.state != CongState::Recovery {
            // ns-2 `ClearScoreBoard()` on every new ACK outside fast recovery.
            if cx.sb.sacked_bytes() > 0 && !keep {
                cx.sb.clear_sack();
            }
            if keep {
                self.enter_on_lost(cx, out);
            }
            return;
        }
        if cx.snd_una >= cx.recover {
            out.exit = true;
            out.grow = false;
            if !keep {
                cx.sb.clear_sack();
            }
        } else {
            self.pipe -= PIPE_PARTIAL_ACK_DECREMENT;
            if keep {
                cx.sb.mark_holes_lost();
            }
            out.timer = TimerAction::Restart;
            out.rtt_sample = false;
            out.grow = false;
        }
    }

    /// Under BBR, Linux's `tcp_time_to_recover()` with RACK: fast recovery starts once a
    /// segment is marked lost (`lost_out`, RACK's time rule: tcp/rack.rs), in the open or
    /// disorder state, whatever the count of duplicate ACKs and whatever RECOVER a timeout
    /// left (Linux bars nothing once its loss state has ended). The first segment is resent
    /// if it is lost and not resent yet; the other lost holes follow through `pick`. A
    /// retransmission of the last episode may still be in flight (an episode resends holes
    /// above its RECOVER too): it stays marked, as Linux keeps TCPCB_SACKED_RETRANS until the
    /// segment is acknowledged or RACK or a timeout finds it lost (clearing the marks resent it
    /// at once: docs/leo.md, "Retransmissions sent twice"). PIPE is not kept here: `pick` takes
    /// Linux's count from the scoreboard.
    pub fn enter_on_lost(&mut self, cx: &mut Cx, out: &mut Out) {
        if !matches!(cx.state, CongState::Open | CongState::Disorder) || cx.sb.lost_out() == 0 {
            return;
        }
        cx.fast_retransmit_ns2(out);
        if !cx.sb.first().is_some_and(|e| e.lost && !e.retransmitted) {
            out.retransmit = None;
        }
        cx.sb.mark_holes_lost();
    }

    pub fn on_dupack(&mut self, cx: &mut Cx, out: &mut Out) {
        if cx.state == CongState::Recovery {
            // seed 001 §2.2.1: "For every subsequent duplicate ACK received, PIPE is
            // decremented by one segment".
            self.pipe -= 1;
            if cx.cc.keeps_sack_info() {
                cx.sb.mark_holes_lost();
            }
            return;
        }
        if cx.cc.keeps_sack_info() {
            self.enter_on_lost(cx, out);
            if out.enter {
                return;
            }
        } else if cx.may_fast_retransmit_ns2(false) {
            let mss = cx.mss();
            self.pipe = if cx.ns2.sack_old_code {
                (cx.win.cwnd / mss) as i64 - PIPE_DUPACKS
            } else {
                // ns-2.35 Sack1 without `oldCode_`: `pipe_ = maxseq_ - highest_ack_ -
                // numdupacks(cwnd_)`, the packets outstanding less the three that left.
                (cx.flight_size() / mss) as i64 - PIPE_DUPACKS
            };
            cx.fast_retransmit_ns2(out);
            // ns-2's Sack1: a new episode may resend every hole.
            cx.sb.clear_retransmitted();
        }
        cx.limited_transmit(out);
    }

    pub fn on_timeout(&mut self, cx: &mut Cx) -> u64 {
        // seed 001 §2.2.1: "When a timeout occurs, the sender resets the SACK table."
        if !cx.cc.keeps_sack_info() {
            cx.sb.clear_sack();
        }
        self.pipe = 0;
        cx.ns2_window(0)
    }

    pub fn gate(&self, state: CongState, _dupacks: u32) -> Gate {
        Gate::pipe_in_recovery(state)
    }

    /// seed 001 §2.2.1: send only while PIPE < CWND; holes first, then new data. CWND is the
    /// window in force now, in whole segments: a classic controller leaves it where the fast
    /// retransmit cut it for the whole phase (ns-2), while BBR sets it on every ACK (packet
    /// conservation for the first round, then growth: Linux `bbr_set_cwnd()`), which a CWND
    /// frozen at the phase's start would ignore (issue 14: BBR then never grew while recovering).
    ///
    /// Under BBR (`Cc::keeps_sack_info`) PIPE is Linux's `tcp_packets_in_flight()` from the
    /// scoreboard's marks ([`Scoreboard::in_flight_linux`], in whole segments), not the count
    /// kept per ACK: Fall & Floyd's PIPE keeps a hole in flight until its retransmission is
    /// acknowledged, where Linux takes a hole out of flight as soon as RACK marks it lost. With
    /// BBR's cwnd at 4 segments (PROBE_RTT, or after an ACK's losses came off it), any four
    /// holes not yet resent stopped the sender for good: no retransmission, no ACK, and the
    /// retransmission timer fired (docs/leo.md, "The multi-flow cells against the kernel").
    ///
    /// [`Scoreboard::in_flight_linux`]: crate::tcp::scoreboard::Scoreboard::in_flight_linux
    pub fn pick(&mut self, cx: &Cx) -> Option<Pick> {
        let pipe = if cx.cc.keeps_sack_info() { cx.sb.in_flight_linux().div_ceil(cx.mss()) as i64 } else { self.pipe };
        if pipe >= (cx.win.cwnd / cx.mss()) as i64 {
            return None;
        }
        if let Some(e) = cx.sb.next_hole() {
            return Some(Pick::Hole(e.start));
        }
        let len = cx.mss();
        (cx.new_data && cx.snd_max + len - cx.snd_una <= cx.rwnd).then_some(Pick::New)
    }

    /// Under RACK (tcp/rack.rs, BBR only) `len` bytes of retransmissions were found lost:
    /// they leave PIPE, as they leave Linux's `tcp_packets_in_flight()` (`retrans_out`), and
    /// become holes again (`next_hole`), so they are resent while PIPE < CWND.
    pub fn on_retransmission_lost(&mut self, len: u64, mss: u64) {
        self.pipe -= len.div_ceil(mss) as i64;
    }

    pub fn on_pipe_sent(&mut self, _len: u64) {
        // seed 001 §2.2.1: "When a segment is sent, PIPE is incremented by one segment."
        self.pipe += 1;
    }
}
