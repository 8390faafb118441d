//! NewReno as RFC 6582 specifies it (§3.2), with "Impatient" timer handling (the timer is
//! reset only by the first partial ACK, RFC 6582 §3.2 step 5 and §4) and the "full ACK" window
//! of §3.2 step 3 option (1).

use super::{CongState, Cx, Gate, Out, TimerAction};

/// RFC 6582 §3.2 step 2: cwnd = ssthresh + 3*SMSS ("artificially inflates the congestion
/// window by the number of segments (three) that have left the network").
const INFLATION_SEGMENTS: u64 = 3;

#[derive(Clone, Debug, Default)]
pub struct NewrenoRfc6582 {
    partial_acks: u32,
}

impl NewrenoRfc6582 {
    pub fn on_new_ack(&mut self, cx: &mut Cx, out: &mut Out) {
        if cx.state != CongState::Recovery {
            return;
        }
        let mss = cx.mss();
        if cx.snd_una >= cx.recover {
            // RFC 6582 §3.2 step 3 (full acknowledgment), option (1):
            // cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
            cx.win.cwnd = cx.win.ssthresh.min(cx.flight_size().max(mss) + mss);
            out.exit = true;
        } else {
            // RFC 6582 §3.2 step 3 (partial acknowledgment): retransmit the first
            // unacknowledged segment, deflate cwnd by the data newly acknowledged, add back
            // SMSS if that was at least SMSS, send what the window allows.
            out.retransmit = Some(cx.snd_una);
            cx.win.cwnd = cx.win.cwnd.saturating_sub(cx.acked).max(mss);
            if cx.acked >= mss {
                cx.win.cwnd += mss;
            }
            self.partial_acks += 1;
            out.timer = if self.partial_acks == 1 { TimerAction::Restart } else { TimerAction::Keep };
        }
        out.grow = false;
    }

    pub fn on_dupack(&mut self, cx: &mut Cx, out: &mut Out) {
        let mss = cx.mss();
        if cx.may_fast_retransmit() {
            // RFC 6582 §3.2 step 2 / RFC 5681 (4): ssthresh = max(FlightSize/2, 2*SMSS).
            let r = cx.reduce(cx.flight_size());
            cx.win.ssthresh = r.ssthresh;
            cx.win.cwnd = r.cwnd + INFLATION_SEGMENTS * mss;
            self.partial_acks = 0;
            out.enter = true;
            out.retransmit = Some(cx.snd_una);
            out.timer = TimerAction::Restart;
        } else if cx.state == CongState::Recovery {
            // RFC 6582 §3.2 step 4 / RFC 5681 (3.2) step 4: cwnd += SMSS.
            cx.win.cwnd += mss;
        }
    }

    pub fn on_timeout(&mut self, cx: &mut Cx) -> u64 {
        // RFC 5681 (4): ssthresh = max(FlightSize/2, 2*SMSS).
        cx.flight_size()
    }

    pub fn gate(&self, _state: CongState, _dupacks: u32) -> Gate {
        Gate::Window { extra: 0 }
    }
}
