//! What leaves next: a GIP copy or a tail loss probe that is due, a due
//! retransmission, then data as the window allows (RFC 5681, RFC 1122
//! 4.2.3.4's sender silly-window avoidance, RFC 3042's limited transmit,
//! RFC 5681 4.1's restart after idle), once the pacer lets it (`tcp::pacing`);
//! and the book-keeping of a segment that leaves (RFC 6298 5.1).

use super::{DataTx, Sender};
use crate::tcp::clock::TcpClock;
use crate::tcp::idle_restart::IdleRule;
use crate::tcp::prr::PrrFlavor;
use crate::time::SimTime;

impl<const EXTRAS: bool, const PACED: bool> Sender<EXTRAS, PACED> {
    /// The next data segment to send now, if any: a GIP copy or a tail loss
    /// probe that is due, a due retransmission of SND.UNA, then data from
    /// SND.NXT as the window allows.
    pub fn poll_data(&mut self, now: SimTime, clock: &TcpClock) -> Option<DataTx> {
        // Linux tcp_write_xmit and tcp_xmit_retransmit_queue: "if (tcp_pacing_check(sk)) break;".
        let paced = self.pacer.as_mut().is_some_and(|p| !p.may_send(now));
        let copy = if EXTRAS && !paced && self.gip_copy.is_some() { self.take_gip_copy() } else { None };
        let next = match copy.or_else(|| self.rack.as_mut().and_then(|r| r.take_probe())) {
            _ if paced => None,
            Some(c) => Some(c),
            None if self.sack.is_some() => self.next_sack_segment(now),
            None => self.next_segment(now),
        };
        let Some((seq, len)) = next else {
            if EXTRAS && (self.cc.tracks_usage() || self.rack.is_some()) {
                self.end_burst(now, clock);
            }
            return None;
        };
        let mut tx = self.transmit(now, clock, seq, len);
        tx.redundant = copy.is_some();
        Some(tx)
    }

    /// The GIP copy due now, unless its data was acknowledged meanwhile.
    #[cold]
    pub(super) fn take_gip_copy(&mut self) -> Option<(u64, u64)> {
        self.gip_copy.take().filter(|&(seq, len)| seq + len > self.snd_una)
    }

    /// Nothing more to send for now: tell cwnd validation how full the window
    /// is (Linux calls `tcp_cwnd_validate` at the end of `tcp_write_xmit` when
    /// it sent something or was cwnd-limited).
    /// The tail loss probe is rescheduled after each burst (`tcp_write_xmit`
    /// ends with `tcp_schedule_loss_probe`).
    #[cold]
    pub(super) fn end_burst(&mut self, now: SimTime, clock: &TcpClock) {
        if self.cc.tracks_usage() {
            let mut flight = self.flight_size();
            if let Some(sb) = self.sack.as_ref() {
                flight -= sb.sacked_in(self.snd_una, self.snd_nxt);
            }
            // tcp_write_xmit: "is_cwnd_limited |= (tcp_packets_in_flight(tp) >= tcp_snd_cwnd(tp))".
            let cwnd_limited = flight + self.mss > self.cc.cwnd();
            if self.burst_sent || cwnd_limited {
                self.cc.on_burst(self.snd_una, self.snd_nxt, flight, cwnd_limited);
            }
        }
        if self.burst_sent && self.rack.is_some() {
            self.schedule_probe(now, clock);
        }
        self.burst_sent = false;
    }

    /// F-RTO step 2b: one of the two new segments, within the peer window.
    #[inline]
    pub(super) fn frto_allows(&mut self, len: u64) -> bool {
        let allowed = EXTRAS
            && self.frto_new > 0
            && self.snd_nxt >= self.snd_max
            && self.snd_nxt + len <= self.snd_una + self.peer_wnd;
        self.frto_new -= u8::from(allowed);
        allowed
    }

    /// `(seq, len)` of the segment [`Sender::poll_data`] sends next, if any.
    #[inline]
    pub(super) fn next_segment(&mut self, now: SimTime) -> Option<(u64, u64)> {
        if self.retransmit_now {
            if self.prr.as_ref().is_some_and(|p| p.flavor() == PrrFlavor::Linux) && self.cc.cwnd() < self.flight_size()
            {
                // Linux retransmits within cwnd (tcp_xmit_retransmit_queue: "if
                // (tcp_packets_in_flight(tp) >= tcp_snd_cwnd(tp)) break"): the head
                // a partial ACK left waits for the quota of a later ACK.
                return None;
            }
            self.retransmit_now = false;
            if self.snd_una < self.snd_max {
                // RFC 5681 (3.2 step 3): "The lost segment starting at SND.UNA MUST be retransmitted"
                return Some((self.snd_una, self.mss.min(self.snd_max - self.snd_una)));
            }
        }
        let unsent = self.app_end - self.snd_nxt;
        if unsent == 0 {
            return None;
        }
        if self.snd_una == self.snd_max {
            self.restart_if_idle(now);
        }
        let flight = self.snd_nxt - self.snd_una;
        let usable = self.send_window().saturating_sub(flight);
        // RFC 1122 (4.2.3.4): send "if a maximum-sized segment can be sent" or
        // "if the data is pushed and all queued data can be sent now" (Nagle off).
        let len = unsent.min(self.mss);
        if len <= usable && self.recovery.burst_left() || self.frto_allows(len) {
            return Some((self.snd_nxt, len));
        }
        self.limited_transmit(len, flight)
    }

    /// Data to send with nothing outstanding: tell the algorithm, and shrink
    /// cwnd first if idle too long.
    #[cold]
    #[inline(never)]
    pub(super) fn restart_if_idle(&mut self, now: SimTime) {
        let app_limited = self.rate.as_deref().is_some_and(|r| r.is_app_limited());
        self.cc.on_tx_start(now, self.idle.last_send(), app_limited);
        if self.idle.due(now, self.rto.rto()) {
            match self.idle.rule() {
                IdleRule::Rfc5681 => self.cc.on_idle_restart(),
                IdleRule::Linux => self.cc.on_linux_idle_restart(self.idle.idle(now), self.rto.rto()),
                // ns-2 `slowdown(CLOSE_CWND_ONE)`.
                IdleRule::Ns2 => self.cc.restart_at(self.mss),
            }
        }
    }

    /// The window is full: send `len` new bytes anyway if limited transmit allows.
    pub(super) fn limited_transmit(&mut self, len: u64, flight: u64) -> Option<(u64, u64)> {
        // RFC 3042 (2): "The congestion window (cwnd) MUST NOT be changed when
        // these new segments are transmitted." — only NEW data (unless the
        // ns-2.35 rule resends), within the peer window.
        let extra = self.limited.allowance(self.recovery.dupacks(), self.recovery.in_recovery(), self.mss);
        if extra == 0 || !self.limited.may_send(self.snd_nxt < self.snd_max) {
            return None;
        }
        let wnd = (self.cc.cwnd() + extra).min(self.peer_wnd);
        if len > wnd.saturating_sub(flight) {
            return None;
        }
        self.limited.on_sent(len);
        Some((self.snd_nxt, len))
    }

    /// Book-keeping for sending `[seq, seq + len)` at `now`.
    pub(super) fn transmit(&mut self, now: SimTime, clock: &TcpClock, seq: u64, len: u64) -> DataTx {
        let end = seq + len;
        let retransmission = seq < self.snd_max;
        let stamp = self.rate.as_deref_mut().map(|r| r.on_sent(now, self.snd_max - self.snd_una));
        if retransmission {
            self.log.mark_retransmitted(seq, end.min(self.snd_max), now, stamp);
            if seq == self.snd_una && self.timer.restarts_on_head_retransmit() {
                // Linux tcp_xmit_retransmit_queue: "if (skb == rtx_head ...) rearm_timer = true".
                self.restart_rtx_timer(now, clock);
            }
        }
        if end > self.snd_max {
            self.log.push(end, now, retransmission, stamp);
            self.snd_max = end;
            if self.time_one && self.timed.is_none() {
                // ns-2.35 TcpAgent::output: "if (seqno > maxseq_) { ... if (!rtt_active_)"
                self.timed = Some((end, now));
            }
        }
        self.snd_nxt = self.snd_nxt.max(end);
        self.burst_sent = true;
        if let Some(prr) = self.prr.as_mut() {
            prr.on_sent(len);
        }
        self.idle.on_send(now);
        if let Some(pacer) = self.pacer.as_mut() {
            pacer.on_sent(now, len);
        }
        if self.rtx_deadline.is_none() {
            // RFC 6298 (5.1): "Every time a packet containing data is sent
            // (including a retransmission), if the timer is not running, start it"
            self.rtx_deadline = Some(self.timer.deadline(now, clock, self.rto.rto()));
        }
        DataTx { seq, len: len as u32, retransmission, redundant: false }
    }
}
