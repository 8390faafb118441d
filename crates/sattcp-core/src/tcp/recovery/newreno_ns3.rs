//! NewReno as ns-3.44 runs it without SACK (`TcpSocketBase` with `TcpClassicRecovery` and
//! `TcpNewReno`, the scoreboard of `TcpTxBuffer` fed by guesses), for comparing sattcp with
//! ns-3 under ns-3's rules (`bench/peers`; bench/README.md, "ns-3 at GEO", traces each rule):
//!
//! - **Guessed SACK marks.** Without SACK, `TcpTxBuffer::AddRenoSack` marks one segment after
//!   the head as SACKed for each duplicate ACK in fast recovery (and one on entering it), the
//!   marks a contiguous run from the second unacknowledged segment; the sender sends while
//!   `BytesInFlight() = sent - marked - lost + retransmitted` is below cwnd, which is RFC 6582's
//!   window inflation. The marks are not cleared when recovery ends (only a timeout clears them,
//!   `ResetRenoSack`). When an ACK finds the new head marked (more duplicates than segments
//!   below it, e.g. drawn by needless retransmissions), `TcpTxBuffer::DiscardUpTo` moves the
//!   mark one segment on and marks the head lost ("our wrong guessing"); the lost head is
//!   retransmitted at once (`NextSeg` rule 1), and the next duplicate ACK enters recovery
//!   (`TcpSocketBase::DupAck`: `IsLost(m_highRxAckMark)`, RFC 6675 §5 step (2), without the
//!   third duplicate and without the RECOVER test).
//! - **Entering recovery** on the third duplicate if `m_highRxAckMark >= m_recover` (a
//!   timeout's RECOVER passed once everything sent before it is acknowledged; RFC 6582 §3.2
//!   step 1 wants more): ssthresh = cwnd = max(BytesInFlight / 2, 2 segments) (`TcpNewReno::
//!   GetSsThresh`, `TcpClassicRecovery::EnterRecovery`), the head retransmitted; the timer is
//!   not restarted (`SendDataPacket` arms only an idle one).
//! - **Partial ACKs** mark the head lost and retransmit it; only the first restarts the timer
//!   (`m_isFirstPartialAck`, RFC 6582 §4 "Impatient"); cwnd stays ssthresh. The full ACK leaves
//!   recovery with cwnd = ssthresh, then one increase.
//! - **Timeouts**: ssthresh = max(BytesInFlight / 2, 2 segments) at every timeout (in `CA_LOSS`
//!   the go-back-N's retransmissions in flight: `SetSentListLost()` clears the retransmitted
//!   flags before `IsHeadRetransmitted()` is asked); duplicate ACKs in `CA_LOSS` are ignored
//!   (`DupAck` returns); the ACK that ends it grows cwnd only by the segments beyond RECOVER.
//!   Every new ACK that restarts the timer forgets the backoff (`NewAck()` recomputes `m_rto`
//!   from the estimate), so the go-back-N after a timeout runs on the un-backed-off RTO: the
//!   sender's `tcp.rto_backoff_reset = "new_ack"`, this recovery's default (config.rs
//!   `BackoffReset`).
//!
//! ns-3's RTT estimator (every ACK a sample, RTO = srtt + max(G, 4 rttvar)) is a sender
//! property, `tcp.rtt_estimator = "ns3"` (tcp/rtt.rs), this recovery's default.

use super::{CongState, Cx, Gate, Out, TimerAction};

#[derive(Clone, Debug, Default)]
pub struct NewrenoNs3 {
    /// Bytes of the segments after the head that guessed SACK marks cover (`m_sackedOut`), a
    /// contiguous run from the second unacknowledged segment.
    marked: u64,
    /// The head is marked lost (`MarkHeadAsLost`).
    head_lost: bool,
    /// A partial ACK of this recovery has restarted the timer (`!m_isFirstPartialAck`).
    first_partial_done: bool,
}

impl NewrenoNs3 {
    /// `TcpTxBuffer::AddRenoSack`: marks the first unmarked segment after the head, if any.
    fn mark_one(&mut self, cx: &Cx) {
        let mss = cx.mss();
        let after_head = (cx.snd_max - cx.snd_una).saturating_sub(mss);
        if self.marked + mss <= after_head {
            self.marked += mss;
        }
    }

    /// `TcpSocketBase::EnterRecovery` without SACK.
    fn enter(&mut self, cx: &mut Cx, out: &mut Out) {
        self.mark_one(cx);
        self.head_lost = true;
        // "(4.2) ssthresh = cwnd = (FlightSize / 2)" from `BytesInFlight() + segment` (the
        // head counted in flight): sent - marked - lost head + one segment.
        let r = cx.reduce(cx.flight_size().saturating_sub(self.marked));
        cx.win.ssthresh = r.ssthresh;
        cx.win.cwnd = r.ssthresh;
        self.first_partial_done = false;
        out.enter = true;
        out.retransmit = Some(cx.snd_una);
        // The timer keeps running: `SendDataPacket` arms it only if it has expired.
        out.timer = TimerAction::Default;
    }

    pub fn on_new_ack(&mut self, cx: &mut Cx, out: &mut Out) {
        let mss = cx.mss();
        // `TcpTxBuffer::DiscardUpTo`: the acknowledged segments leave with their marks (never
        // the old head's); a mark left on the new head was a wrong guess: it moves one segment
        // on (`AddRenoSack`) and the head is marked lost.
        let segments = cx.acked.div_ceil(mss);
        let head_marked = self.marked >= segments * mss && cx.snd_una < cx.snd_max;
        self.marked = self.marked.saturating_sub((segments - 1) * mss);
        if head_marked {
            self.marked -= mss;
            self.mark_one(cx);
        }
        self.head_lost = head_marked;
        match cx.state {
            CongState::Recovery if cx.snd_una < cx.recover => {
                // Partial ACK: "Manually setting head as lost", `DoRetransmit()`,
                // `NewAck(ack, m_isFirstPartialAck)`.
                self.head_lost = true;
                out.retransmit = Some(cx.snd_una);
                out.timer = if self.first_partial_done { TimerAction::Keep } else { TimerAction::Restart };
                self.first_partial_done = true;
                out.grow = false;
            }
            CongState::Recovery => {
                // Full ACK: cwnd = ssthresh (it is), `IncreaseWindow()` once.
                self.first_partial_done = false;
                out.exit = true;
                out.grow = true;
            }
            CongState::Loss if cx.snd_una >= cx.recover => {
                // Leaving `CA_LOSS`: `IncreaseWindow((ack - m_recover) / segment)`.
                self.first_partial_done = false;
                out.grow = cx.snd_una - cx.recover >= mss;
            }
            _ => {}
        }
        if head_marked && out.retransmit.is_none() && cx.state != CongState::Loss {
            // `NextSeg` rule (1): a segment marked lost and not retransmitted goes first.
            out.retransmit = Some(cx.snd_una);
        }
    }

    pub fn on_dupack(&mut self, cx: &mut Cx, out: &mut Out) {
        match cx.state {
            // "We do not count the DupAcks received in CA_LOSS".
            CongState::Loss => {}
            CongState::Recovery => self.mark_one(cx),
            CongState::Open | CongState::Disorder => {
                let third = cx.dupacks == cx.dup_thresh && (!cx.after_timeout || cx.snd_una >= cx.recover);
                // `IsLost(m_highRxAckMark)`: the head's lost flag, with a mark above it.
                if third || self.head_lost && self.marked > 0 {
                    self.enter(cx, out);
                }
            }
        }
    }

    pub fn on_timeout(&mut self, cx: &mut Cx) -> u64 {
        // `ReTxTimeout`: ssthresh from the bytes in flight before it; `ResetRenoSack`,
        // `SetSentListLost`.
        let in_flight = match cx.state {
            CongState::Loss => cx.snd_nxt - cx.snd_una,
            _ => cx.flight_size().saturating_sub(self.marked),
        };
        self.marked = 0;
        self.head_lost = false;
        in_flight
    }

    pub fn gate(&self, state: CongState, _dupacks: u32) -> Gate {
        // `AvailableWindow() = cwnd - BytesInFlight()`: the marked segments are not in flight.
        Gate::Window { extra: if state == CongState::Loss { 0 } else { self.marked } }
    }
}
