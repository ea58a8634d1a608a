//! Errors the engine reports.

/// Everything that can go wrong in the engine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// A scenario field is out of range; `field` is its dotted path.
    #[error("{field}: {message}")]
    InvalidScenario {
        /// Dotted path of the offending field, e.g. `switch.buffer`.
        field: String,
        /// What is allowed.
        message: String,
    },
    /// The run needs more simulated time than a `u64` of picoseconds holds
    /// (about 213 days): an event fell due past the end of representable time.
    #[error("scenario: the run needs more than 2^64 ps (about 213 days) of simulated time; shorten it (duration, blocks) or make it faster (link.rate, link.rtt, workload.stagger, wan.delay)")]
    TimeOverflow,
}
