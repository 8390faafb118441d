//! Moving links: a link whose propagation delay (and optionally rate and bit error rate)
//! changes over time, piecewise constant, from a table or from constellation geometry.
//!
//! Rules (docs/leo.md):
//! - A packet's propagation delay is the one in force when its last bit leaves the sender
//!   (when its propagation starts): arrival = end of transmission + delay(end of
//!   transmission). Packets in flight keep the delay they left with, so when the delay drops
//!   at a reconfiguration a packet sent after it can overtake packets sent before it: the
//!   link then delivers out of order, as a real path change does.
//! - Rate and bit error rate are the ones in force when the packet is offered to the link
//!   (its transmission time is fixed then, as for a fixed link).
//! - An interval with no path (`delay: None`, e.g. no satellite in view) drops every packet
//!   whose transmission ends in it (reason `no_route`); packets already in flight arrive.
//! - A path change does not touch the sending queue: queued packets wait at the sending
//!   ground station and leave on the path in force when they are transmitted.
//!
//! A fixed link keeps its FIFO of packets in flight and its one head event; only moving links
//! use [`MovingFlight`], which keeps packets in flight sorted by arrival (ties in sending
//! order) and one live event per link through a [`TimerSlot`] (an earlier new head re-arms
//! it; the stale event is dropped in O(1)).

use crate::engine::queue::TimerSlot;
use crate::metrics::result::Trace;
use crate::net::hop::Hop;
use crate::net::link::{Admit, DropReason, Link};
use crate::scenario::Scenario;
use std::collections::BTreeMap;
use crate::time::{Rate, SimTime};
use std::collections::VecDeque;

/// From `at` on (until the next change): the one-way delay (None: no path), and the rate and
/// bit error rate if they change.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Change {
    pub at: SimTime,
    pub delay: Option<SimTime>,
    pub rate: Option<Rate>,
    pub ber: Option<f64>,
}

/// A piecewise-constant schedule of link parameters. The first change is at time 0; changes
/// are in strictly increasing time order.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Schedule {
    changes: Vec<Change>,
}

impl Schedule {
    /// Fails (with the rule broken) unless the first change is at 0 and times increase.
    pub fn new(changes: Vec<Change>) -> Result<Self, String> {
        match changes.first() {
            None => return Err("a schedule needs at least one entry".into()),
            Some(c) if c.at != SimTime::ZERO => return Err(format!("the first entry must be at 0s, got {}", c.at)),
            _ => {}
        }
        if let Some(w) = changes.windows(2).find(|w| w[1].at <= w[0].at) {
            return Err(format!("entry times must increase, got {} after {}", w[1].at, w[0].at));
        }
        Ok(Schedule { changes })
    }

    /// Delays only: `(at, delay)` pairs (the tests' schedules; runs build theirs from
    /// [`Change`]s: tables in `validate.rs`, constellations in `validate/moving.rs`).
    #[cfg(test)]
    pub fn delays(points: &[(SimTime, Option<SimTime>)]) -> Result<Self, String> {
        Schedule::new(points.iter().map(|&(at, delay)| Change { at, delay, rate: None, ber: None }).collect())
    }

    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// Index of the change in force at `t`.
    #[inline]
    fn index_at(&self, t: SimTime) -> usize {
        self.changes.partition_point(|c| c.at <= t) - 1
    }

    /// The delay in force at `t` (None: no path).
    #[inline]
    pub fn delay_at(&self, t: SimTime) -> Option<SimTime> {
        self.changes[self.index_at(t)].delay
    }

    /// The rate and bit error rate in force at `t` (the last ones set at or before `t`).
    pub fn rate_ber_at(&self, t: SimTime) -> (Option<Rate>, Option<f64>) {
        let i = self.index_at(t);
        let rate = self.changes[..=i].iter().rev().find_map(|c| c.rate);
        let ber = self.changes[..=i].iter().rev().find_map(|c| c.ber);
        (rate, ber)
    }

    /// The delay at time 0 (for bandwidth-delay products), or the first delay there is.
    pub fn initial_delay(&self) -> SimTime {
        self.changes.iter().find_map(|c| c.delay).unwrap_or(SimTime::ZERO)
    }

    /// Whether the rate or the bit error rate ever changes.
    pub fn varies_rate_or_ber(&self) -> bool {
        self.changes.iter().any(|c| c.rate.is_some() || c.ber.is_some())
    }
}

/// Counters of a moving link.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MovingStats {
    /// Packets that arrived before a packet sent earlier on the same link.
    pub reordered: u64,
    /// Packets dropped because their transmission ended when there was no path.
    pub drops_no_route: u64,
}

/// The packets in flight on a moving link, in arrival order, and its one live arrival event.
#[derive(Clone, Debug)]
pub struct MovingFlight {
    pub schedule: Schedule,
    /// (arrival, sending sequence, packet), sorted by (arrival, sequence).
    in_flight: VecDeque<(SimTime, u64, u32)>,
    sent: u64,
    slot: TimerSlot,
    /// Index of the change whose rate/BER were last applied.
    applied: usize,
    pub stats: MovingStats,
}

/// What sending a packet on a moving link decided.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Sent {
    /// In flight; schedule an arrival event at this time if given.
    InFlight(Option<SimTime>),
    /// No path when its transmission ended: dropped.
    NoRoute,
}

impl MovingFlight {
    pub fn new(schedule: Schedule) -> Self {
        MovingFlight { schedule, in_flight: VecDeque::new(), sent: 0, slot: TimerSlot::default(), applied: usize::MAX, stats: MovingStats::default() }
    }

    /// The rate and bit error rate to apply before offering a packet at `now`, when they
    /// changed since the last call.
    #[inline]
    pub fn params_at(&mut self, now: SimTime) -> Option<(Option<Rate>, Option<f64>)> {
        let i = self.schedule.index_at(now);
        if i == self.applied {
            return None;
        }
        self.applied = i;
        Some(self.schedule.rate_ber_at(now))
    }

    /// Packet `pkt` finished transmission at `tx_end`.
    pub fn send(&mut self, tx_end: SimTime, pkt: u32) -> Sent {
        let Some(delay) = self.schedule.delay_at(tx_end) else {
            self.stats.drops_no_route += 1;
            return Sent::NoRoute;
        };
        let arrival = tx_end + delay;
        let seq = self.sent;
        self.sent += 1;
        // Insert after every packet arriving no later (ties keep sending order); usually at
        // the back.
        let pos = self.in_flight.iter().rposition(|&(t, _, _)| t <= arrival).map_or(0, |i| i + 1);
        if pos < self.in_flight.len() {
            self.stats.reordered += 1;
        }
        self.in_flight.insert(pos, (arrival, seq, pkt));
        Sent::InFlight(if pos == 0 { self.slot.arm(Some(arrival)) } else { None })
    }

    /// The link's arrival event fired at `now`: the packet that arrives now (None for a stale
    /// event), and the next arrival event to schedule. Packets due at the same instant come
    /// one event each, in sending order.
    #[cold]
    #[inline(never)]
    pub fn arrive(&mut self, now: SimTime) -> Option<(u32, Option<SimTime>)> {
        if !self.slot.fire(now) {
            return None;
        }
        let (t, _, pkt) = self.in_flight.pop_front().expect("an armed moving link has a packet in flight");
        debug_assert_eq!(t, now, "a packet in flight was not delivered on time");
        Some((pkt, self.slot.arm(self.in_flight.front().map(|&(t, _, _)| t))))
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
}

/// A moving link as a hop (`net::hop::Hop::Moving`): the link that serialises its packets,
/// and its packets in flight.
#[derive(Clone, Debug)]
pub struct MovingHop {
    pub link: u32,
    pub flight: MovingFlight,
    /// The link's rate until an entry of the schedule sets another (the link's `rate`, which
    /// the entries overwrite as they come into force).
    pub base_rate: Rate,
}

impl MovingHop {
    /// The rate averaged over the run, `[0, end)`: each entry's rate while it is in force (the
    /// link's own until an entry sets one), none while there is no path. What the run's C is
    /// made of for a moving bottleneck (`Hop::capacity_bps`): the rate in force at the end alone
    /// made a link slowed to 1 kbps for its last second report an efficiency of 88,224.
    pub fn mean_rate_bps(&self, end: SimTime) -> f64 {
        let changes = self.flight.schedule.changes();
        let mut rate = self.base_rate.as_bps() as f64;
        let mut bit_ns = 0.0;
        for (i, c) in changes.iter().enumerate().take_while(|(_, c)| c.at < end) {
            if let Some(r) = c.rate {
                rate = r.as_bps() as f64;
            }
            let until = changes.get(i + 1).map_or(end, |n| n.at.min(end));
            if c.delay.is_some() {
                bit_ns += rate * (until.0 - c.at.0) as f64;
            }
        }
        bit_ns / end.0.max(1) as f64
    }

    /// Offers packet `pkt` of `bytes` to `link` at `now`: the rate and BER in force now, the
    /// delay in force when its transmission ends. Returns the link's decision (a packet with
    /// no path is `Dropped(NoRoute)`) and the arrival event to schedule, if any.
    // Out of line and cold: fixed links' `Hop::offer` stays small enough to inline.
    #[cold]
    #[inline(never)]
    pub fn offer(&mut self, now: SimTime, pkt: u32, bytes: u32, link: &mut Link) -> (Admit, Option<SimTime>) {
        if let Some((rate, ber)) = self.flight.params_at(now) {
            if let Some(r) = rate {
                link.rate = r;
            }
            if let Some(b) = ber {
                link.ber = b;
            }
        }
        match link.enqueue(now, bytes) {
            // The link adds its (initial) delay; a moving link's delay comes from its schedule.
            Admit::Sent { arrival, corrupted } => match self.flight.send(arrival - link.delay, pkt) {
                Sent::InFlight(next) => (Admit::Sent { arrival, corrupted }, next),
                Sent::NoRoute => (Admit::Dropped(DropReason::NoRoute), None),
            },
            dropped => (dropped, None),
        }
    }
}

/// Traces of moving links that `[trace] links` names, known before the run: `link/L/delay`
/// (the one-way delay in force from each change on, s; intervals without a path are not
/// drawn, see `link/L/up`), `link/L/up` (1 with a path, 0 without), `link/L/rate` (bits per
/// second, from each change that sets one; only where the schedule sets rates) and, for the
/// hop a `[constellation]` drives, `link/L/handover` (at each route change, the number of
/// satellites on the new route, 0 for none) and `link/L/elevation` (at each step with a path,
/// the lowest elevation of its ground-satellite legs, degrees). Changes after the run's end
/// are left out.
pub fn static_traces(hops: &[Hop], links: &[Link], sc: &Scenario) -> BTreeMap<String, Trace> {
    let mut traces = BTreeMap::new();
    let traced = |name: &str| sc.trace.links.iter().any(|n| n == name);
    for h in hops {
        let Hop::Moving(m) = h else { continue };
        let name = &links[m.link as usize].name;
        if !traced(name) {
            continue;
        }
        let (mut delay, mut up, mut rate) = (Trace::default(), Trace::default(), Trace::default());
        for c in m.flight.schedule.changes().iter().take_while(|c| c.at <= sc.duration) {
            if let Some(d) = c.delay {
                delay.record(c.at.as_secs_f64(), d.as_secs_f64());
            }
            up.record(c.at.as_secs_f64(), c.delay.is_some() as u8 as f64);
            if let Some(r) = c.rate {
                rate.record(c.at.as_secs_f64(), r.as_bps() as f64);
            }
        }
        traces.insert(format!("link/{name}/delay"), delay);
        traces.insert(format!("link/{name}/up"), up);
        if !rate.t.is_empty() {
            traces.insert(format!("link/{name}/rate"), rate);
        }
    }
    if let Some(cr) = &sc.constellation {
        for name in [format!("hop{}", cr.hop), format!("hop{}-rev", cr.hop)] {
            if traced(&name) {
                let mut tr = Trace::default();
                for (t, _, new) in cr.path.changes().take_while(|c| c.0 <= sc.duration) {
                    tr.t.push(t.as_secs_f64());
                    tr.v.push(new.map_or(0, |r| r.satellites().count()) as f64);
                }
                traces.insert(format!("link/{name}/handover"), tr);
                let mut el = Trace::default();
                for seg in cr.path.segments.iter().take_while(|s| s.start <= sc.duration) {
                    if let Some(r) = &seg.route {
                        el.record(seg.start.as_secs_f64(), r.lowest_elevation_deg());
                    }
                }
                traces.insert(format!("link/{name}/elevation"), el);
            }
        }
    }
    traces
}

/// Round-trip time samples of one flow as the sender sees them, for traces of moving paths
/// (`flow/F/rtt`): a first transmission's send time, taken when a cumulative ACK first covers
/// it. Karn's rule: a retransmission makes every sample from its sequence number on
/// ambiguous, so those are forgotten. Kept only for traced flows.
#[derive(Clone, Debug, Default)]
pub struct RttProbe {
    /// (end sequence number, send time) of first transmissions not yet acknowledged.
    pending: VecDeque<(u64, SimTime)>,
}

impl RttProbe {
    /// A data segment [seq, end) left the sender at `now`, for the `tx_count`-th time.
    pub fn on_send(&mut self, now: SimTime, seq: u64, end: u64, tx_count: u16) {
        if tx_count == 0 {
            if self.pending.back().is_none_or(|&(e, _)| e < end) {
                self.pending.push_back((end, now));
            }
        } else {
            while self.pending.back().is_some_and(|&(e, _)| e > seq) {
                self.pending.pop_back();
            }
        }
    }

    /// A cumulative ACK for `ack` reached the sender at `now`: the sample of the latest
    /// first transmission it covers, if any.
    pub fn on_ack(&mut self, now: SimTime, ack: u64) -> Option<SimTime> {
        let mut sample = None;
        while let Some(&(end, sent)) = self.pending.front() {
            if end > ack {
                break;
            }
            self.pending.pop_front();
            sample = Some(now - sent);
        }
        sample
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// Delivers every event in time order, as the engine would (equal times first in first
    /// out, stale events included); returns (time, packet).
    fn drain(f: &mut MovingFlight, pending: Vec<SimTime>) -> Vec<(SimTime, u32)> {
        let mut q: Vec<(SimTime, usize)> = pending.into_iter().enumerate().map(|(i, t)| (t, i)).collect();
        let mut n = q.len();
        let mut got = Vec::new();
        while !q.is_empty() {
            q.sort();
            let (t, _) = q.remove(0);
            if let Some((p, next)) = f.arrive(t) {
                got.push((t, p));
                if let Some(nt) = next {
                    q.push((nt, n));
                    n += 1;
                }
            }
        }
        got
    }

    #[test]
    fn rtt_probe_follows_karn() {
        let mut p = RttProbe::default();
        p.on_send(ms(0), 1, 1001, 0);
        p.on_send(ms(1), 1001, 2001, 0);
        p.on_send(ms(2), 2001, 3001, 0);
        // ACK of the first segment at 30 ms: 30 ms.
        assert_eq!(p.on_ack(ms(30), 1001), Some(ms(30)));
        // The second is retransmitted: it and the third are forgotten.
        p.on_send(ms(40), 1001, 2001, 1);
        assert_eq!(p.on_ack(ms(70), 3001), None);
        p.on_send(ms(71), 3001, 4001, 0);
        assert_eq!(p.on_ack(ms(100), 4001), Some(ms(29)));
    }

    #[test]
    fn schedule_rules() {
        assert!(Schedule::delays(&[]).is_err());
        assert!(Schedule::delays(&[(ms(1), Some(ms(5)))]).is_err());
        assert!(Schedule::delays(&[(ms(0), Some(ms(5))), (ms(0), Some(ms(6)))]).is_err());
        let s = Schedule::delays(&[(ms(0), Some(ms(10))), (ms(15), None), (ms(20), Some(ms(4)))]).unwrap();
        assert_eq!(s.delay_at(ms(0)), Some(ms(10)));
        assert_eq!(s.delay_at(ms(14)), Some(ms(10)));
        assert_eq!(s.delay_at(ms(15)), None);
        assert_eq!(s.delay_at(ms(20)), Some(ms(4)));
        assert_eq!(s.delay_at(SimTime::MAX), Some(ms(4)));
    }

    #[test]
    fn a_delay_drop_lets_later_packets_overtake() {
        // 10 ms until 15 ms, then 4 ms. Packets leave at 14, 14.5 (old delay: arrive 24,
        // 24.5) and 15, 16 (new delay: arrive 19, 20): the last two overtake the first two.
        let mut f = MovingFlight::new(Schedule::delays(&[(ms(0), Some(ms(10))), (ms(15), Some(ms(4)))]).unwrap());
        let mut pending = Vec::new();
        for (i, t) in [ms(14), SimTime::from_micros(14_500), ms(15), ms(16)].into_iter().enumerate() {
            if let Sent::InFlight(Some(e)) = f.send(t, i as u32) {
                pending.push(e);
            }
        }
        assert_eq!(f.stats.reordered, 2);
        assert_eq!(drain(&mut f, pending), vec![(ms(19), 2), (ms(20), 3), (ms(24), 0), (SimTime::from_micros(24_500), 1)]);
        assert_eq!(f.in_flight(), 0);
    }

    #[test]
    fn a_delay_rise_keeps_order_and_equal_arrivals_keep_sending_order() {
        let mut f = MovingFlight::new(Schedule::delays(&[(ms(0), Some(ms(4))), (ms(15), Some(ms(10)))]).unwrap());
        let mut pending = Vec::new();
        // 14 + 4 = 18; 15 + 10 = 25 (twice: two packets ending together arrive together, in
        // sending order); 21 + 10 = 31.
        for (i, t) in [ms(14), ms(15), ms(15), ms(21)].into_iter().enumerate() {
            if let Sent::InFlight(Some(e)) = f.send(t, i as u32) {
                pending.push(e);
            }
        }
        assert_eq!(f.stats.reordered, 0);
        assert_eq!(drain(&mut f, pending), vec![(ms(18), 0), (ms(25), 1), (ms(25), 2), (ms(31), 3)]);
    }

    #[test]
    fn no_path_drops_what_leaves_during_the_outage() {
        let mut f = MovingFlight::new(Schedule::delays(&[(ms(0), Some(ms(10))), (ms(15), None), (ms(20), Some(ms(10)))]).unwrap());
        assert!(matches!(f.send(ms(14), 0), Sent::InFlight(Some(_))));
        assert_eq!(f.send(ms(15), 1), Sent::NoRoute);
        assert_eq!(f.send(ms(19), 2), Sent::NoRoute);
        assert!(matches!(f.send(ms(20), 3), Sent::InFlight(None)));
        assert_eq!(f.stats.drops_no_route, 2);
        assert_eq!(drain(&mut f, vec![ms(24)]), vec![(ms(24), 0), (ms(30), 3)]);
    }

    #[test]
    fn rate_and_ber_apply_once_per_change() {
        let s = Schedule::new(vec![
            Change { at: ms(0), delay: Some(ms(1)), rate: Some(Rate::mbps(10)), ber: None },
            Change { at: ms(5), delay: Some(ms(2)), rate: None, ber: Some(1e-6) },
            Change { at: ms(9), delay: Some(ms(3)), rate: Some(Rate::mbps(2)), ber: None },
        ])
        .unwrap();
        let mut f = MovingFlight::new(s);
        assert_eq!(f.params_at(ms(0)), Some((Some(Rate::mbps(10)), None)));
        assert_eq!(f.params_at(ms(4)), None);
        assert_eq!(f.params_at(ms(5)), Some((Some(Rate::mbps(10)), Some(1e-6))));
        assert_eq!(f.params_at(ms(9)), Some((Some(Rate::mbps(2)), Some(1e-6))));
    }
}
