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
}
