//! incast-bench: synchronized reads over real sockets, the measurement the
//! simulator models.
//!
//! [`server`] answers requests of the wire [`protocol`] (`docs/PROTOCOL.md`);
//! [`client::read`] drives barrier-synchronized reads from N servers, as
//! FAST08 §3 describes, and returns a [`ReadReport`] whose figures carry the
//! names of the simulator's summary (`goodput_mbps`, `block_time_ms`, ...)
//! plus what only a kernel can tell: per-connection [`tcp_info`] and the
//! host's [`netstat`] counters. [`sockopt`] holds the socket knobs (Nagle,
//! delayed ACK, congestion control, buffer sizes) both sides set; the
//! server's [`sampler`] traces the kernel's sending state ([`tcp_info`],
//! and BBR's model from [`bbr_info`]) while it serves.
#![deny(missing_docs)]

pub mod bbr_info;
pub mod client;
pub mod config;
pub mod netstat;
pub mod protocol;
pub mod report;
pub mod sampler;
pub mod server;
pub mod sockopt;
pub mod tcp_info;

pub use client::read;
pub use config::{ConfigError, ReadConfig, DEFAULT_PORT};
pub use report::{ReadFailure, ReadReport, Status};
pub use server::{RunningServer, Server, ServerConfig};
