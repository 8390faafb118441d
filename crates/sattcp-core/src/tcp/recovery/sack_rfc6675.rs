//! Conservative SACK-based loss recovery, RFC 6675 §5: loss is inferred by `IsLost()`
//! (DupThresh SACKed segments above), the flight is `SetPipe()` computed from the scoreboard,
//! and `NextSeg()` rules 1-3 choose what to send while cwnd - pipe >= 1 SMSS. (Rule 4, the
//! rescue retransmission, is not implemented.)

use super::{CongState, Cx, Gate, Out, Pick};

#[derive(Clone, Debug, Default)]
pub struct SackRfc6675 {
    pipe: u64,
    cwnd: u64,
}

impl SackRfc6675 {
    /// `SetPipe()` as of the last update, bytes.
    pub fn pipe(&self) -> u64 {
        self.pipe
    }

    fn update(&mut self, cx: &mut Cx) {
        cx.sb.mark_lost_rfc6675(cx.dup_thresh, cx.mss());
        self.pipe = cx.sb.pipe_rfc6675();
        self.cwnd = cx.win.cwnd;
    }

    pub fn on_new_ack(&mut self, cx: &mut Cx, out: &mut Out) {
        if cx.state != CongState::Recovery {
            // RFC 6675 §5 (4): enter recovery as soon as IsLost(HighACK + 1), even on a new ACK.
            if cx.state != CongState::Loss && cx.snd_una > cx.recover && cx.sb.first_is_lost(cx.dup_thresh, cx.mss()) {
                self.enter(cx, out);
            }
            return;
        }
        out.grow = false;
        if cx.snd_una >= cx.recover {
            // RFC 6675 §5 (2): the cumulative ACK reached RecoveryPoint.
            out.exit = true;
        } else {
            self.update(cx);
        }
    }

    pub fn on_dupack(&mut self, cx: &mut Cx, out: &mut Out) {
        if cx.state == CongState::Recovery {
            self.update(cx);
            return;
        }
        // RFC 6675 §5 (3)-(4): DupAcks >= DupThresh, or IsLost(HighACK + 1); after an RTO, not
        // before HighACK >= RecoveryPoint (§5.1: HighACK = snd_una - 1, RecoveryPoint = HighData
        // = recover - 1).
        let lost = cx.sb.first_is_lost(cx.dup_thresh, cx.mss());
        let ok = cx.state != CongState::Loss || cx.snd_una > cx.recover;
        if ok && (cx.dupacks >= cx.dup_thresh || lost) && (!cx.after_timeout || cx.snd_una >= cx.recover) {
            self.enter(cx, out);
        }
    }

    fn enter(&mut self, cx: &mut Cx, out: &mut Out) {
        // RFC 6675 §5 (4.1)-(4.2): RecoveryPoint = HighData; ssthresh = cwnd = FlightSize/2.
        let r = cx.reduce(cx.flight_size());
        cx.win.ssthresh = r.ssthresh;
        cx.win.cwnd = r.ssthresh;
        if !cx.cc.keeps_sack_info() {
            // Under BBR a retransmission of the last episode may still be in flight: it stays
            // marked (sack_ff.rs, `on_dupack`).
            cx.sb.clear_retransmitted();
        }
        cx.sb.mark_lost(cx.snd_una);
        // RFC 6675 §5 (4.3): retransmit the first segment presumed dropped.
        out.enter = true;
        out.grow = false;
        out.retransmit = Some(cx.snd_una);
        out.timer = super::TimerAction::Restart;
        self.update(cx);
        // The retransmission counts in pipe once sent.
        self.pipe += cx.sb.first().map_or(0, |e| e.len());
    }

    pub fn on_timeout(&mut self, cx: &mut Cx) -> u64 {
        // RFC 2018 §8 / RFC 6675 §5.1: forget SACK information, then use what arrives in the
        // recovery after the RTO (go-back-N skips segments SACKed since).
        // Under BBR the table is kept (`Cc::keeps_sack_info`, as Linux's
        // `tcp_timeout_mark_lost()`; RFC 6675 §5.1 leaves it to updates of RFC 2018).
        if !cx.cc.keeps_sack_info() {
            cx.sb.clear_sack();
        }
        cx.flight_size()
    }

    pub fn gate(&self, state: CongState, _dupacks: u32) -> Gate {
        Gate::pipe_in_recovery(state)
    }

    /// RFC 6675 §5 (C): while cwnd - pipe >= 1 SMSS, NextSeg().
    pub fn pick(&mut self, cx: &Cx) -> Option<Pick> {
        let mss = cx.mss();
        if self.cwnd < self.pipe + mss {
            return None;
        }
        let pick = if let Some(e) = cx.sb.next_lost() {
            // NextSeg() rule 1.
            Some((Pick::Hole(e.start), e.len()))
        } else if cx.new_data && cx.snd_max + mss - cx.snd_una <= cx.rwnd {
            // Rule 2.
            Some((Pick::New, mss))
        } else {
            // Rule 3.
            cx.sb.next_unsacked_below_high().map(|e| (Pick::Hole(e.start), e.len()))
        };
        let (p, len) = pick?;
        // RFC 6675 §5 (C.4): pipe grows by what is sent.
        self.pipe += len;
        Some(p)
    }
}
