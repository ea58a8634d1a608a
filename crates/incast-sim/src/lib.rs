//! incast-sim: a deterministic packet-level simulator of datacenter TCP incast.
//!
//! A run is a pure function of a [`Scenario`]: [`run`] builds the network
//! (one client, N servers, one switch by default; several clients and other
//! fabrics on request), establishes one TCP connection per client and
//! server, drives barrier-synchronized reads until the stop condition, and
//! returns a [`RunResult`]. Time is integer picoseconds ([`time::SimTime`]);
//! events at equal times run in the order they were scheduled; every random
//! choice comes from a substream of the scenario's seed.
//!
//! What is modelled and what is not is listed in each module's header and
//! collected in `docs/MODEL.md`.
#![deny(missing_docs)]

pub mod error;
pub mod event;
mod fifo;
pub mod net;
pub mod rng;
pub mod scenario;
pub mod settings;
pub mod sim;
pub mod stats;
pub mod tcp;
pub mod time;
pub mod workload;

pub use error::SimError;
pub use scenario::Scenario;
pub use sim::run;
pub use stats::RunResult;
