//! RACK's time-based loss detection (RFC 8985, Linux `net/ipv4/tcp_recovery.c`) for the
//! senders that keep SACK information as Linux does (`Cc::keeps_sack_info`, BBR only; the
//! classic flavours keep their recoveries' ns-2 rules and never build one of these).
//!
//! Two uses, one rule ([`Rack::lost_at`]: a segment sent at `t` is lost once a segment sent
//! after it has been delivered and `t + RACK.rtt + RACK.reo_wnd` has passed, RFC 8985 §6.2
//! step 5):
//!
//! - a retransmission timeout finds lost the segments sent at least `RACK.rtt` before it
//!   (RFC 8985 §6.3, Linux `tcp_timeout_mark_lost()`); the go-back-N resends a more recent
//!   one, likely still in flight, only once the rule finds it lost;
//! - a retransmission is lost when a segment sent after it is delivered and that time has
//!   passed (§6.2 step 5 applied to the retransmissions, Linux `tcp_rack_detect_loss()`), so
//!   it is sent again without waiting for the retransmission timer;
//! - outside recovery (the open and disorder states) the originals too
//!   ([`Rack::detect_lost_originals`]): a segment found lost there starts fast recovery, as
//!   Linux's `tcp_time_to_recover()` does on `lost_out` (`recovery/sack_ff.rs`,
//!   `enter_on_lost`), from an ACK or from the reordering timer (`tcp_rack_reo_timeout()`),
//!   whatever the duplicate ACKs. In recovery the originals are left to the recoveries' own
//!   rules (Fall & Floyd's holes, RFC 6675's `IsLost()`), which mark them as RACK with a zero
//!   reordering window would; in the loss state of a timeout, to its go-back-N.
//!
//! The tail loss probe's state (RFC 8985 §7, Linux `tlp_high_seq`, `tlp_retrans`) lives here
//! too, in [`Tlp`], so that it costs the classic flavours nothing (the sender drives it:
//! docs/tcp.md, "Tail loss probe (BBR)").
//!
//! Not modelled: the reordering window's adaptation from DSACKs (§6.2 step 4,
//! `RACK.reo_wnd_mult`: our receivers send no DSACK, so it stays 1).

use super::scoreboard::Scoreboard;
use crate::time::SimTime;
use std::collections::VecDeque;

/// RFC 8985 §6.2 step 4: the reordering window is min_RTT / 4 (`RACK.reo_wnd_mult` = 1).
const REO_WND_DIVISOR: u64 = 4;

/// The RACK state of one sender (RFC 8985 §5.2 names in the field docs).
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// `RACK.xmit_ts`: the latest send time of a delivered segment, `None` before any.
    xmit: Option<SimTime>,
    /// `RACK.rtt`: the RTT of that segment.
    rtt: SimTime,
    /// `RACK.end_seq`: the end of that segment (ties of send time: RFC 8985 §6.2 step 2's
    /// `RACK_sent_after()`).
    xmit_end: u64,
    /// `RACK.fack`: the highest end of a delivered segment.
    fack: u64,
    /// `RACK.reord`: a segment never retransmitted was delivered below `fack`.
    reord: bool,
    /// The retransmissions sent and not yet judged, in send order `(sent, seq)`: their send
    /// times never decrease, so the first not yet due stops the scan (Linux walks its
    /// time-sorted `tsorted_sent_queue` the same way). An entry whose segment was acknowledged,
    /// SACKed or sent again since is stale and dropped when reached.
    rexmits: VecDeque<(SimTime, u64)>,
    /// The last timeout marked lost every segment sent at or before this time (RFC 8985
    /// §6.3); the go-back-N resends the others only once RACK finds them lost.
    rto_lost_before: Option<SimTime>,
    /// Retransmissions found lost in the loss state of a timeout, which the go-back-N has
    /// passed: sent again first ([`TcpSender`](super::TcpSender)'s `send_in_window`).
    resend: VecDeque<u64>,
    /// The tail loss probe (RFC 8985 §7), kept here with RACK's state.
    pub tlp: Tlp,
}

/// The tail loss probe's state (RFC 8985 §7; Linux `tcp_sock`'s `tlp_high_seq` and
/// `tlp_retrans`). The probe timer itself is the sender's (`Timer::LossProbe`).
#[derive(Clone, Debug, Default)]
pub struct Tlp {
    /// `tcp.tlp`: probes are scheduled at all.
    pub on: bool,
    /// Linux `tlp_high_seq`: `snd_nxt` when the outstanding probe was sent (`None`: no probe
    /// outstanding; Linux's 0).
    pub high_seq: Option<u64>,
    /// Linux `tlp_retrans`: the outstanding probe retransmitted the last segment (rather than
    /// sending new data).
    pub retrans: bool,
    /// Probes sent (`TcpSender::loss_probes`, Linux `LINUX_MIB_TCPLOSSPROBES`).
    pub probes: u64,
    /// Losses the probes repaired (`TcpSender::loss_probe_recoveries`, Linux
    /// `LINUX_MIB_TCPLOSSPROBERECOVERY`).
    pub recoveries: u64,
}

impl Tlp {
    /// Linux `tcp_process_tlp_ack()` for an ACK up to `ack` while a probe is outstanding;
    /// `progress`: the ACK acknowledges new data, carries data, updates the window or SACKs
    /// new data (`FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP | FLAG_DATA_SACKED`). A probe of new
    /// data ends its episode once acknowledged; a resent last segment when an ACK passes the
    /// probe's `snd_nxt` (a loss repaired: counted, and true is returned, Linux's CWR episode,
    /// `tcp_init_cwnd_reduction()`, which also ends the probe's episode), or at a pure duplicate
    /// ACK (the original and the probe both arrived). An ACK of exactly the probe's `snd_nxt`
    /// that acknowledges data leaves the episode open, as Linux's `after()` does. Our receivers
    /// send no DSACK, so `FLAG_DSACK_TLP` never ends one.
    pub fn on_ack(&mut self, ack: u64, progress: bool) -> bool {
        let Some(high) = self.high_seq else { return false };
        if ack < high {
            return false;
        }
        if !self.retrans {
            self.high_seq = None;
        } else if ack > high {
            self.high_seq = None;
            self.recoveries += 1;
            return true;
        } else if !progress {
            self.high_seq = None;
        }
        false
    }
}

/// When the go-back-N after a timeout may resend a segment ([`Rack::timeout_resend`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Resend {
    Now,
    /// Once this time has come (the reordering timer's).
    At(SimTime),
    /// Once a segment sent after it is delivered: no time is known yet.
    OnAck,
}

impl Rack {
    /// RACK's state, with the tail loss probe on or off (`tcp.tlp`).
    pub fn with_tlp(on: bool) -> Self {
        Rack { tlp: Tlp { on, ..Tlp::default() }, ..Rack::default() }
    }

    /// RFC 8985 §6.2 steps 2-3 for one newly delivered segment (cumulatively acknowledged or
    /// SACKed, not delivered before) ending at `end`, last sent at `sent`.
    pub fn on_delivered(&mut self, now: SimTime, sent: SimTime, end: u64, retransmitted: bool, min_rtt: Option<SimTime>) {
        let rtt = now - sent;
        // Step 2: a retransmission ACKed sooner than the minimum RTT was delivered by its
        // original transmission; its send time says nothing.
        if retransmitted && min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        if self.xmit.is_none_or(|x| sent > x || sent == x && end > self.xmit_end) {
            self.xmit = Some(sent);
            self.rtt = rtt;
            self.xmit_end = end;
        }
        // Step 3.
        if end > self.fack {
            self.fack = end;
        } else if end < self.fack && !retransmitted {
            self.reord = true;
        }
    }

    /// RFC 8985 §6.2 step 4: `RACK.reo_wnd`, zero while no reordering has been seen in loss
    /// recovery (fast or after a timeout) or once the duplicate-ACK threshold's worth of
    /// segments is SACKed (`dupthresh_reached`, Linux `tcp_rack_reo_wnd()`: `sacked_out >=
    /// reordering`), else min(min_RTT / 4, SRTT).
    pub fn reo_wnd(&self, recovering: bool, min_rtt: SimTime, srtt: SimTime) -> SimTime {
        self.reo_wnd_at(recovering, false, min_rtt, srtt)
    }

    /// [`reo_wnd`](Self::reo_wnd) with Linux's duplicate-threshold rule.
    pub fn reo_wnd_at(&self, recovering: bool, dupthresh_reached: bool, min_rtt: SimTime, srtt: SimTime) -> SimTime {
        if !self.reord && (recovering || dupthresh_reached) {
            return SimTime::ZERO;
        }
        SimTime::from_nanos(min_rtt.as_nanos() / REO_WND_DIVISOR).min(srtt)
    }

    /// RFC 8985 §6.2 step 5, the one rule: when a segment sent at `sent`, before a segment
    /// since delivered (`RACK.xmit_ts`), is lost: `sent + RACK.rtt + RACK.reo_wnd`. (Before any
    /// delivery there is no `RACK.rtt`: the callers ask only once `RACK.xmit_ts` is set.)
    pub fn lost_at(&self, sent: SimTime, reo_wnd: SimTime) -> SimTime {
        sent + self.rtt + reo_wnd
    }

    /// RFC 8985 §6.2 step 5 over the originals outside fast recovery
    /// ([`Scoreboard::mark_originals_lost`]); `(0, None)` before any delivery.
    pub fn detect_lost_originals(&self, now: SimTime, reo_wnd: SimTime, sb: &mut Scoreboard) -> (u64, Option<SimTime>) {
        match self.xmit {
            Some(x) => sb.mark_originals_lost(x, self.xmit_end, self.rtt + reo_wnd, now),
            None => (0, None),
        }
    }

    /// A segment was retransmitted now.
    pub fn on_retransmit(&mut self, now: SimTime, seq: u64) {
        self.rexmits.push_back((now, seq));
    }

    /// A retransmission timeout at `now` (RFC 8985 §6.3, Linux `tcp_timeout_mark_lost()`):
    /// the segments sent at least `RACK.rtt` ago are lost (Linux passes a zero reordering
    /// window here), all of them before any segment has been delivered; the go-back-N resends
    /// them, and its resends are judged afresh.
    pub fn on_timeout(&mut self, now: SimTime) {
        self.rexmits.clear();
        self.resend.clear();
        // Linux `tcp_enter_loss()`: `tp->tlp_high_seq = 0`.
        self.tlp.high_seq = None;
        self.rto_lost_before = Some(match self.xmit {
            Some(_) => now.saturating_sub(self.rtt),
            None => now,
        });
    }

    /// Whether the go-back-N after a timeout may resend now a segment sent at `sent` (not the
    /// first unacknowledged one, always lost, §6.3): the timeout marked it lost, or RACK has
    /// since (§6.2 step 5: a segment sent after it delivered and [`lost_at`](Self::lost_at)
    /// come). A segment sent more recently is likely still in flight: resending it at once
    /// wasted the link and overwrote its rate snapshot (issue 14).
    pub fn timeout_resend(&self, sent: SimTime, now: SimTime, reo_wnd: SimTime) -> Resend {
        if self.rto_lost_before.is_none_or(|b| sent <= b) {
            return Resend::Now;
        }
        match self.xmit {
            Some(x) if sent < x => {
                let due = self.lost_at(sent, reo_wnd);
                if now >= due {
                    Resend::Now
                } else {
                    Resend::At(due)
                }
            }
            _ => Resend::OnAck,
        }
    }

    /// The first of the retransmissions [`detect_lost_retransmissions`] queued to resend that
    /// is still lost and not resent (the others are dropped), or `None`.
    ///
    /// [`detect_lost_retransmissions`]: Self::detect_lost_retransmissions
    pub fn next_resend<'a>(&mut self, sb: &'a Scoreboard) -> Option<&'a super::scoreboard::Entry> {
        while let Some(&seq) = self.resend.front() {
            match sb.get(seq) {
                Some(e) if e.lost && !e.retransmitted && !e.sacked => return Some(e),
                _ => {
                    self.resend.pop_front();
                }
            }
        }
        None
    }

    /// Bytes of the retransmissions queued to resend still lost and not resent: out of flight (Linux `tcp_packets_in_flight()` counts a lost segment only once resent).
    pub fn resend_bytes(&self, sb: &Scoreboard) -> u64 {
        self.resend.iter().filter_map(|&seq| sb.get(seq)).filter(|e| e.lost && !e.retransmitted && !e.sacked).map(|e| e.len()).sum()
    }

    /// RFC 8985 §6.2 step 5 over the retransmissions: marks lost in `sb` every retransmission
    /// sent before a delivered segment (`RACK.xmit_ts`) whose time ([`lost_at`](Self::lost_at))
    /// has come, and with `queue` (the loss state of a timeout, where the go-back-N has passed
    /// them) queues each to be resent first ([`next_resend`](Self::next_resend)). Returns the
    /// bytes marked and, if a retransmission sent before `RACK.xmit_ts` is not yet due, when it
    /// will be (RFC 8985 §6.2 step 5's reordering timer, Linux `tcp_rack_reo_timeout()`).
    pub fn detect_lost_retransmissions(&mut self, now: SimTime, reo_wnd: SimTime, sb: &mut Scoreboard, queue: bool) -> (u64, Option<SimTime>) {
        let Some(xmit) = self.xmit else { return (0, None) };
        let mut bytes = 0;
        while let Some(&(sent, seq)) = self.rexmits.front() {
            if !sb.get(seq).is_some_and(|e| e.retransmitted && !e.sacked && e.last_sent == sent) {
                self.rexmits.pop_front(); // acknowledged, SACKed or resent since
                continue;
            }
            if sent >= xmit {
                return (bytes, None); // nothing sent after it has been delivered yet
            }
            let due = self.lost_at(sent, reo_wnd);
            if now < due {
                return (bytes, Some(due));
            }
            self.rexmits.pop_front();
            bytes += sb.mark_retransmission_lost(seq);
            if queue {
                self.resend.push_back(seq);
            }
        }
        (bytes, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    fn ms(t: u64) -> SimTime {
        SimTime::from_millis(t)
    }

    /// Ten segments [1, 10001) sent at 0-9 ms; segment 2 (2001) retransmitted at 150 ms.
    fn board() -> Scoreboard {
        let mut sb = Scoreboard::default();
        for i in 0..10 {
            sb.push(1 + i * MSS, 1 + (i + 1) * MSS, false, ms(i));
        }
        sb
    }

    /// A retransmission is lost once a segment sent after it is delivered and RACK.rtt +
    /// reo_wnd has passed since it left (RFC 8985 §6.2 step 5); until then the reordering
    /// timer is armed for that time; a segment sent before it, delivered, says nothing.
    #[test]
    fn a_retransmission_is_lost_once_a_later_segment_is_delivered_and_its_rtt_has_passed() {
        let mut sb = board();
        let mut r = Rack::default();
        sb.on_retransmit(2001, ms(150));
        r.on_retransmit(ms(150), 2001);
        // Segment 9 (sent at 8 ms) SACKed at 108 ms: sent before the retransmission.
        r.on_delivered(ms(108), ms(8), 9001, false, Some(ms(100)));
        assert_eq!(r.detect_lost_retransmissions(ms(108), ms(25), &mut sb, true), (0, None));
        // A new segment sent at 160 ms and delivered at 260 ms: RACK.rtt 100 ms, so the
        // retransmission of 150 ms is lost at 150 + 100 + 25 = 275 ms.
        r.on_delivered(ms(260), ms(160), 11001, false, Some(ms(100)));
        assert_eq!(r.lost_at(ms(150), ms(25)), ms(275));
        assert_eq!(r.detect_lost_retransmissions(ms(260), ms(25), &mut sb, true), (0, Some(ms(275))));
        assert!(sb.get(2001).unwrap().retransmitted);
        assert!(r.next_resend(&sb).is_none());
        assert_eq!(r.detect_lost_retransmissions(ms(275), ms(25), &mut sb, true), (MSS, None));
        assert_eq!(r.next_resend(&sb).map(|e| (e.start, e.len())), Some((2001, MSS)), "queued to be resent");
        let e = sb.get(2001).unwrap();
        assert_eq!((e.retransmitted, e.lost, sb.lost_marked()), (false, true, MSS as u32), "lost again, counted once");
        assert_eq!(r.detect_lost_retransmissions(ms(300), ms(25), &mut sb, true), (0, None), "judged once");
    }

    /// A retransmission acknowledged sooner than min_RTT after it left was delivered by its
    /// original (RFC 8985 §6.2 step 2): it does not advance RACK.xmit_ts.
    #[test]
    fn a_retransmission_delivered_within_min_rtt_does_not_move_rack() {
        let mut r = Rack::default();
        r.on_delivered(ms(100), ms(0), 1001, false, Some(ms(100)));
        r.on_delivered(ms(150), ms(120), 2001, true, Some(ms(100)));
        assert_eq!((r.xmit, r.rtt), (Some(ms(0)), ms(100)));
    }

    /// RFC 8985 §6.2 steps 3-4: reo_wnd is zero in recovery until a segment never
    /// retransmitted is delivered below RACK.fack; then min(min_RTT / 4, SRTT).
    #[test]
    fn the_reordering_window_opens_in_recovery_only_after_reordering() {
        let mut r = Rack::default();
        r.on_delivered(ms(100), ms(0), 5001, false, None);
        assert_eq!((r.reo_wnd(true, ms(100), ms(120)), r.reo_wnd(false, ms(100), ms(120))), (SimTime::ZERO, ms(25)));
        r.on_delivered(ms(101), ms(1), 3001, true, None);
        assert!(!r.reord, "a retransmission below fack is not reordering");
        r.on_delivered(ms(102), ms(2), 2001, false, None);
        assert_eq!((r.reord, r.reo_wnd(true, ms(100), ms(20))), (true, ms(20)), "capped at SRTT");
    }
}
