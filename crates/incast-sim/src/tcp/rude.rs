//! Rude TCP (RUDE §2.3, §3): a flow that turns congestion control off, and
//! how it turns it back on.
//!
//! **Models:** a rude flow sends as much as the receiver's window allows —
//! cwnd is not consulted — while staying fully reliable (retransmissions,
//! timeouts and recovery run as usual). Its congestion control keeps running
//! in the background on the *fair* window F, so it is known when rudeness
//! ends (RUDE §3.2: the implementation "decouples the congestion window
//! calculations from the actual sending code"). Every segment of a rude flow
//! carries the rude bit (`flags::RUDE`, RUDE §3.1: the lowest reserved TCP
//! flag). A host-wide gate, off by default, must allow rude flows before any
//! flow may be rude (RUDE §3.1's `tcp_rude` sysctl; a scenario that asks for
//! rude flows with the gate off is refused). Turning rudeness off has the
//! paper's three semantics (RUDE §3.2, Appendix A): `on`; `off_now` — if more
//! is in flight than F allows, a congestion event right away (ssthresh and
//! cwnd to half the flight, RFC 5681 eq. 4), else simply polite; `off_nicely`
//! — an artificial window R starts at the data in flight and every change
//! the congestion control makes to F is made to R too (an increase by the
//! same amount, a decrease by the same factor: RUDE Table 1), the flow stays
//! marked until R is within 1 % of F, and then uses F alone.
//! **Deliberately different:** the smart-router reset of RUDE §2.3 is not
//! modelled (connections never close here): a policing switch drops every
//! rude packet instead (`switch.rude_policy`).
//! **Not modelled:** the `TCP_RUDE` query, rudeness on the receiving side.

/// How a rude flow turns congestion control back on (RUDE Appendix A).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RudeOff {
    /// `RUDE_OFF_NOW`: at once, with a congestion event if over the fair window.
    Now,
    /// `RUDE_OFF_NICELY`: once the artificial window has converged to the fair one.
    #[default]
    Nicely,
}

/// What the application asks of a flow (RUDE Appendix A: `RUDE_ON`,
/// `RUDE_OFF_NOW`, `RUDE_OFF_NICELY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RudeRequest {
    /// Turn congestion control off.
    On,
    /// Turn it back on at once, with a congestion event if needed.
    OffNow,
    /// Turn it back on once the artificial and fair windows converge.
    OffNicely,
}

/// Where a flow stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RudeState {
    /// Congestion control in force.
    Polite,
    /// Congestion control off: the receiver's window is the only limit.
    Rude,
    /// Turning off nicely: sending by the artificial window R, still marked.
    Converging {
        /// The artificial window R, in bytes.
        r: u64,
    },
}

/// The rudeness of one sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rude {
    state: RudeState,
}

/// What the sender must do to its congestion window when rudeness ends now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RudeExit {
    /// Nothing: the flow fits its fair window, or converges nicely.
    Nothing,
    /// RUDE §3.2 second case: a congestion event with `flight` bytes outstanding.
    CongestionEvent {
        /// Bytes in flight when rudeness ended.
        flight: u64,
    },
}

impl Rude {
    /// A polite flow.
    pub fn new() -> Self {
        Rude { state: RudeState::Polite }
    }

    /// Where the flow stands.
    #[inline]
    pub fn state(&self) -> RudeState {
        self.state
    }

    /// True while segments carry the rude bit.
    #[inline]
    pub fn marked(&self) -> bool {
        self.state != RudeState::Polite
    }

    /// The window to send by, given the fair window `f` and the peer's
    /// window `peer`: the peer's window while rude, R while converging, F otherwise.
    #[inline]
    pub fn window(&self, f: u64, peer: u64) -> u64 {
        match self.state {
            RudeState::Polite => f.min(peer),
            RudeState::Rude => peer,
            RudeState::Converging { r } => r.min(peer),
        }
    }

    /// The application's request, with `flight` bytes outstanding and fair window `f`.
    pub fn request(&mut self, req: RudeRequest, flight: u64, f: u64) -> RudeExit {
        match (req, self.state) {
            (RudeRequest::On, _) => self.state = RudeState::Rude,
            (_, RudeState::Polite) => {}
            // RUDE §3.2, first case: "no more packets in the network than it should".
            (_, _) if flight <= f => self.state = RudeState::Polite,
            (RudeRequest::OffNow, _) => {
                self.state = RudeState::Polite;
                return RudeExit::CongestionEvent { flight };
            }
            // RUDE §3.2, third case: "an artificial cwnd based on the number of
            // packets currently in the network".
            (RudeRequest::OffNicely, RudeState::Rude) => self.state = RudeState::Converging { r: flight },
            (RudeRequest::OffNicely, RudeState::Converging { .. }) => {}
        }
        RudeExit::Nothing
    }

    /// The congestion control moved F from `before` to `after`: apply the
    /// same change to R (RUDE Table 1) and end rudeness once R is within 1 % of F.
    pub fn on_fair_change(&mut self, before: u64, after: u64) {
        let RudeState::Converging { r } = self.state else { return };
        let r = if after >= before {
            r + (after - before)
        } else {
            // A decrease by the same factor (halving F halves R).
            (r as u128 * after as u128 / before.max(1) as u128) as u64
        };
        // "until the rude and fair windows converge to within 1%" (RUDE §3.2, Fig. 4).
        self.state = if r <= after + after / 100 { RudeState::Polite } else { RudeState::Converging { r } };
    }
}

impl Default for Rude {
    fn default() -> Self {
        Rude::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// RUDE §2.3: a rude flow sends by the receiver's window alone.
    #[test]
    fn rude_flow_sends_by_the_receive_window() {
        let mut r = Rude::new();
        assert_eq!(r.window(10 * MSS, 64 * MSS), 10 * MSS);
        r.request(RudeRequest::On, 0, 10 * MSS);
        assert!(r.marked());
        assert_eq!(r.window(10 * MSS, 64 * MSS), 64 * MSS);
    }

    /// RUDE §3.2: off_now with too much in flight is a congestion event; a
    /// flow within its fair window simply turns polite, whatever the semantics.
    #[test]
    fn rude_3_2_off_now_is_a_congestion_event_only_when_over_the_fair_window() {
        let mut r = Rude::new();
        r.request(RudeRequest::On, 0, 0);
        assert_eq!(r.request(RudeRequest::OffNow, 50 * MSS, 10 * MSS), RudeExit::CongestionEvent { flight: 50 * MSS });
        assert_eq!(r.state(), RudeState::Polite);
        r.request(RudeRequest::On, 0, 0);
        assert_eq!(r.request(RudeRequest::OffNicely, 5 * MSS, 10 * MSS), RudeExit::Nothing);
        assert_eq!(r.state(), RudeState::Polite);
    }

    /// RUDE Table 1: additive increases keep R − F constant, halvings halve
    /// it; with Reno's cycles the windows meet within 1 % and marking stops.
    #[test]
    fn rude_table_1_off_nicely_converges_then_stops_marking() {
        let mut r = Rude::new();
        r.request(RudeRequest::On, 0, 0);
        // The 90 % / 10 % start of RUDE Fig. 4, in segments: 7500 in flight, F = 400.
        let mut f = 400 * MSS;
        r.request(RudeRequest::OffNicely, 7500 * MSS, f);
        let mut cycles = 0;
        while r.marked() {
            // One Reno cycle: F grows by one segment per RTT to 800, then halves.
            while f < 800 * MSS && r.marked() {
                r.on_fair_change(f, f + MSS);
                f += MSS;
            }
            r.on_fair_change(f, f / 2);
            f /= 2;
            cycles += 1;
            assert!(cycles < 20, "no convergence");
        }
        assert!((5..=15).contains(&cycles), "{cycles} halvings");
        assert_eq!(r.window(f, u64::MAX), f);
    }
}
