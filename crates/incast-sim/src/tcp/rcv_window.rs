//! The receive window a receiver advertises: constant, or grown as Linux grows it.
//!
//! **Models:** with `tcp.rcv_window = "linux"`, the window management of
//! Linux 6.x (net/ipv4/tcp_input.c, tcp_output.c) for an application that
//! reads everything at once, as the engine's clients do:
//! - the start (`tcp_select_initial_window`, `tcp_init_buffer_space`): the
//!   window the initial receive buffer offers is `tcp.rcv_wnd` (half of
//!   `tcp_rmem[1]`); the window clamp is that less one segment ("Force
//!   reservation of one segment"), and `rcv_ssthresh`, the window actually
//!   offered, starts at the clamp;
//! - growth per segment (`tcp_grow_window`): every in-order data segment, and
//!   an out-of-order one when SACK is on ("For non sack flows, do not grow
//!   window to force DUPACK and trigger fast retransmit"), raises
//!   `rcv_ssthresh` by max(2·MSS, 2·length), up to the clamp;
//! - receive-buffer autotuning (`tcp_rcv_space_adjust`, "dynamic right
//!   sizing"): once per receiver round trip, if the application read more in
//!   it than in the last one measured (`rcvq_space.space`, at first
//!   min(`rcv_ssthresh`, 10 MSS)), the buffer is sized for
//!   rcvwin = 2·copied + 16·MSS plus twice rcvwin·(copied − space)/space ("To
//!   cope with packet losses, we need a 2x factor. To cope with slow start
//!   ... a 4x factor"), at most `tcp.rcv_buf_max` (`tcp_rmem[2]`), and the
//!   clamp follows it to that window;
//! - the advertised value (`__tcp_select_window`): `rcv_ssthresh` rounded up
//!   to the window scale's unit, 2^(log2 `rcv_buf_max` − 15) bytes
//!   (`tcp_select_initial_window`'s `rcv_wscale`).
//!
//! **Deliberately different:** the receiver's round trip is its endpoint's
//! smoothed RTT (Linux measures one of its own from echoed timestamps or once
//! per window, `tcp_rcv_rtt_measure`); a buffer holds twice the window it
//! offers (the default `scaling_ratio` of one half), and every segment's
//! buffer overhead is taken to fit (check #2 of `tcp_grow_window`).
//! **Not modelled:** the room out-of-order data takes in the buffer, memory
//! pressure, zero windows (the application never lags), and the quickack
//! budget's dependence on the current window (it follows the initial one,
//! `tcp::delayed_ack`). `linux-2.6`'s older autotuning formula.

use super::receiver::Arrival;
use crate::time::{SimDuration, SimTime};

/// How the advertised receive window evolves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RcvWindowRule {
    /// `tcp.rcv_wnd` on every segment, for the whole connection.
    #[default]
    Fixed,
    /// Grown as Linux grows it: per segment and by receive-buffer autotuning.
    Linux,
}

impl RcvWindowRule {
    /// The largest window a receiver offers that starts at `rcv_wnd` and whose
    /// buffer may grow to `buf_max`: autotuning makes Linux's clamp follow
    /// half the buffer (`tcp_rcv_space_adjust`).
    pub fn largest(self, rcv_wnd: u64, buf_max: u64) -> u64 {
        match self {
            RcvWindowRule::Fixed => rcv_wnd,
            RcvWindowRule::Linux => rcv_wnd.max(buf_max / 2),
        }
    }
}

/// Linux's receive-window state of one receiver (`rcv_ssthresh`,
/// `window_clamp`, `rcvq_space`).
#[derive(Clone, Debug)]
pub struct LinuxRcvWindow {
    /// Payload bytes per full segment (`advmss`).
    mss: u64,
    /// Largest receive buffer autotuning may reach (`tcp_rmem[2]`).
    buf_max: u64,
    /// Window scale unit: advertised windows are multiples of it.
    scale_unit: u64,
    /// Most the window may grow to (`window_clamp`).
    clamp: u64,
    /// The window offered now, before rounding (`rcv_ssthresh`).
    rcv_ssthresh: u64,
    /// Bytes read in the last measured round trip (`rcvq_space.space`).
    space: u64,
    /// RCV.NXT when the current measurement began (`rcvq_space.seq`).
    space_seq: u64,
    /// When the current measurement began (`rcvq_space.time`).
    space_time: SimTime,
}

impl LinuxRcvWindow {
    /// A receiver whose initial buffer offers `initial` bytes of window,
    /// with segments of `mss` payload bytes, whose buffer may grow to
    /// `buf_max`, at `now`.
    pub fn new(initial: u64, mss: u32, buf_max: u64, now: SimTime) -> Self {
        let mss = u64::from(mss.max(1));
        // tcp_init_buffer_space: "Force reservation of one segment."
        let clamp = if initial > 2 * mss { (initial - mss).max(2 * mss) } else { initial };
        // tcp_select_initial_window: rcv_wscale = ilog2(space) - 15, within 0..=14.
        let wscale = buf_max.max(1).ilog2().saturating_sub(15).min(14);
        LinuxRcvWindow {
            mss,
            buf_max,
            scale_unit: 1 << wscale,
            clamp,
            rcv_ssthresh: clamp,
            // tcp_init_buffer_space: min3(rcv_ssthresh, rcv_wnd, TCP_INIT_CWND * advmss).
            space: clamp.min(10 * mss),
            space_seq: 0,
            space_time: now,
        }
    }

    /// The window to advertise (`__tcp_select_window`).
    #[inline]
    pub fn advertised(&self) -> u64 {
        self.rcv_ssthresh.div_ceil(self.scale_unit) * self.scale_unit
    }

    /// A data segment of `len` bytes arrived as `arrival` at `now`; the
    /// application has read up to `rcv_nxt`, and the receiver's round trip
    /// is `rtt` (none before a sample). `sack`: SACK is on.
    pub fn on_data(
        &mut self,
        now: SimTime,
        arrival: Arrival,
        len: u32,
        rcv_nxt: u64,
        rtt: Option<SimDuration>,
        sack: bool,
    ) {
        let in_order = matches!(arrival, Arrival::InOrder | Arrival::FillsGap);
        if in_order || (sack && arrival == Arrival::OutOfOrder) {
            self.grow(len);
        }
        if in_order {
            self.adjust_space(now, rcv_nxt, rtt);
        }
    }

    /// `tcp_grow_window`: "Increase window, if skb with such overhead will fit to rcvbuf in future."
    fn grow(&mut self, len: u32) {
        let room = self.clamp.saturating_sub(self.rcv_ssthresh);
        if room > 0 {
            self.rcv_ssthresh += room.min((2 * self.mss).max(2 * u64::from(len)));
        }
    }

    /// `tcp_rcv_space_adjust`, once the application has read up to `rcv_nxt`.
    fn adjust_space(&mut self, now: SimTime, rcv_nxt: u64, rtt: Option<SimDuration>) {
        // "if (time < (tp->rcv_rtt_est.rtt_us >> 3) || tp->rcv_rtt_est.rtt_us == 0) return;"
        // (rtt_us is kept eight times over: this waits one round trip).
        match rtt {
            Some(rtt) if now.since(self.space_time) >= rtt => {}
            _ => return,
        }
        let copied = rcv_nxt - self.space_seq;
        if copied > self.space {
            let rcvwin = 2 * copied + 16 * self.mss;
            let grow = rcvwin * (copied - self.space) / self.space;
            let rcvbuf = (2 * (rcvwin + 2 * grow)).min(self.buf_max);
            // "Make the window clamp follow along."
            self.clamp = self.clamp.max(rcvbuf / 2);
            self.space = copied;
        }
        self.space_seq = rcv_nxt;
        self.space_time = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    fn us(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    /// The default buffer (tcp_rmem[1] 128 KiB, 64 KiB of window, 32 MiB at
    /// most): the clamp reserves one segment, 64088 bytes, advertised in
    /// units of 1024 (window scale 10).
    #[test]
    fn tcp_init_buffer_space_reserves_one_segment_of_the_initial_window() {
        let w = LinuxRcvWindow::new(65536, MSS, 32 << 20, us(0));
        assert_eq!(w.clamp, 65536 - 1448);
        assert_eq!(w.advertised(), 63 * 1024);
        assert_eq!(w.space, 10 * 1448);
    }

    /// tcp_grow_window: in order, each segment raises the window by two
    /// segments until it meets the clamp; out of order only with SACK.
    #[test]
    fn tcp_grow_window_grows_by_two_segments_up_to_the_clamp_and_not_out_of_order_without_sack() {
        let mut w = LinuxRcvWindow::new(65536, MSS, 32 << 20, us(0));
        w.rcv_ssthresh = 10 * 1448;
        w.on_data(us(1), Arrival::OutOfOrder, MSS, 0, None, false);
        assert_eq!(w.rcv_ssthresh, 10 * 1448, "a non-SACK receiver keeps its window for the duplicate ACKs");
        w.on_data(us(1), Arrival::OutOfOrder, MSS, 0, None, true);
        assert_eq!(w.rcv_ssthresh, 12 * 1448);
        w.on_data(us(1), Arrival::InOrder, MSS, 1448, None, true);
        assert_eq!(w.rcv_ssthresh, 14 * 1448);
        for _ in 0..100 {
            w.on_data(us(1), Arrival::InOrder, MSS, 1448, None, true);
        }
        assert_eq!(w.rcv_ssthresh, w.clamp);
    }

    /// tcp_rcv_space_adjust: reading more in a round trip than in the last
    /// one sizes the buffer for 2·copied + 16·MSS plus twice the growth, and
    /// the clamp (so the window) follows; within the round trip nothing moves.
    #[test]
    fn tcp_rcv_space_adjust_grows_the_clamp_once_per_round_trip_when_reads_grow() {
        let rtt = Some(SimDuration::from_micros(100));
        let mut w = LinuxRcvWindow::new(65536, MSS, 32 << 20, us(0));
        let space = w.space;
        w.on_data(us(50), Arrival::InOrder, MSS, 40 * 1448, rtt, false);
        assert_eq!((w.clamp, w.space), (65536 - 1448, space), "half a round trip: no measurement yet");
        let copied = 40 * 1448u64;
        w.on_data(us(100), Arrival::InOrder, MSS, copied, rtt, false);
        let rcvwin = 2 * copied + 16 * 1448;
        let grow = rcvwin * (copied - space) / space;
        assert_eq!(w.clamp, rcvwin + 2 * grow);
        assert_eq!(w.space, copied);
        let clamp = w.clamp;
        w.on_data(us(200), Arrival::InOrder, MSS, copied + 1448, rtt, false);
        assert_eq!(w.clamp, clamp, "less read than the last round trip: the buffer stays");
        w.rcv_ssthresh = w.clamp - 1448;
        w.on_data(us(201), Arrival::InOrder, MSS, copied + 2 * 1448, rtt, false);
        assert_eq!(w.rcv_ssthresh, clamp, "the window grows into the larger clamp");
    }

    /// The buffer never passes tcp_rmem[2]: the window stops at half of it.
    #[test]
    fn autotuning_stops_at_the_largest_buffer() {
        let rtt = Some(SimDuration::from_micros(100));
        let mut w = LinuxRcvWindow::new(65536, MSS, 256 << 10, us(0));
        w.on_data(us(100), Arrival::InOrder, MSS, 10 << 20, rtt, false);
        assert_eq!(w.clamp, 128 << 10);
        assert_eq!(w.scale_unit, 8, "log2(256 KiB) - 15 = 3");
    }
}
