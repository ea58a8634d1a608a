//! Optional mechanisms, compiled in or out.
//!
//! **Models:** nothing of its own. An endpoint keeps the state of SACK
//! (RFC 6675), RACK-TLP (RFC 8985), PRR (RFC 6937), GIP, timestamps
//! (RFC 7323) and Linux's receive window in [`Gated`] fields, and tests
//! F-RTO and Eifel, cwnd validation (RFC 7661), DCTCP and Rude TCP where
//! it would act on them. Built with them (`EXTRAS = true`, the default), it
//! reads each field as the `Option` it holds and makes each test; built
//! without (`EXTRAS = false`), every field reads `None` and every test
//! fails, as constants, so its per-segment paths carry none of them. The
//! engine is built so, its own optional parts (arrival orders other than
//! the queueing order, PAUSE and traffic classes, ECN marking, rude
//! policing, the UDP source, traces, the packet capture, sender-side loss,
//! a NIC queue limit, ICTCP) left out too, when the scenario turns none of
//! them on ([`super::TcpConfig::extras`], `sim::extras`). The pacer
//! (`tcp::pacing`) and the delivery-rate samples (`tcp::delivery_rate`)
//! have a switch of their own (`PACED`), on when the scenario paces
//! ([`super::TcpConfig::paced`]): BBR alone runs on a build with them and
//! without the rest. Of the four builds, the engine makes three: none, the
//! pacer alone, and all (a scenario with any other part on gets the pacer
//! too, unused).
//! **Deliberately different:** nothing: with those mechanisms off, both
//! builds behave alike, so a run's results do not depend on the build, only
//! its speed does (`bench/`; docs/validation/speed.md).

/// The state of an optional mechanism: `Some` while it is on; with `ON`
/// false, `None` for good, and read as `None` without looking.
#[derive(Clone, Debug)]
pub struct Gated<T, const ON: bool>(Option<T>);

impl<T, const ON: bool> Gated<T, ON> {
    /// The mechanism's `state`, which must be `None` when `ON` is false.
    pub fn new(state: Option<T>) -> Self {
        assert!(ON || state.is_none(), "a mechanism compiled out cannot be turned on");
        Gated(state)
    }

    /// Is the mechanism on?
    #[inline(always)]
    pub fn is_some(&self) -> bool {
        ON && self.0.is_some()
    }

    /// Is the mechanism off?
    #[inline(always)]
    pub fn is_none(&self) -> bool {
        !self.is_some()
    }

    /// Its state, while it is on.
    #[inline(always)]
    pub fn as_ref(&self) -> Option<&T> {
        if ON {
            self.0.as_ref()
        } else {
            None
        }
    }

    /// Its state, to change, while it is on.
    #[inline(always)]
    pub fn as_mut(&mut self) -> Option<&mut T> {
        if ON {
            self.0.as_mut()
        } else {
            None
        }
    }
}

impl<T: std::ops::DerefMut, const ON: bool> Gated<T, ON> {
    /// The boxed state, while the mechanism is on.
    #[inline(always)]
    pub fn as_deref(&self) -> Option<&T::Target> {
        self.as_ref().map(|t| &**t)
    }

    /// The boxed state, to change, while the mechanism is on.
    #[inline(always)]
    pub fn as_deref_mut(&mut self) -> Option<&mut T::Target> {
        self.as_mut().map(|t| &mut **t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_in_it_reads_what_it_holds() {
        let mut on: Gated<Box<u32>, true> = Gated::new(Some(Box::new(7)));
        assert!(on.is_some());
        *on.as_deref_mut().unwrap() += 1;
        assert_eq!(on.as_deref(), Some(&8));
        let off: Gated<Box<u32>, true> = Gated::new(None);
        assert!(off.is_none() && off.as_ref().is_none());
    }

    #[test]
    fn compiled_out_it_is_always_none() {
        let mut g: Gated<u32, false> = Gated::new(None);
        assert!(g.is_none() && g.as_ref().is_none() && g.as_mut().is_none());
    }

    #[test]
    #[should_panic(expected = "compiled out")]
    fn compiled_out_it_refuses_a_state() {
        let _ = Gated::<u32, false>::new(Some(1));
    }
}
