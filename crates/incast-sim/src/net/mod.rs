//! The network: links, output queues, the switch and hosts' NICs.
//!
//! **Models:** store-and-forward switching; every output port is a FIFO
//! queue in front of a link that serializes one frame at a time at its line
//! rate and then propagates it for a fixed delay. A packet arrives at the next
//! node when its last bit does.
//! **Deliberately different:** a FIFO port with a fixed rate knows each
//! frame's departure time the moment it is queued, so a port schedules one
//! event per packet (its arrival at the next node) rather than one per
//! dequeue; queue occupancy is recovered exactly from those departure times.
//! Any fabric of hosts and switches ([`fabric`]) is wired the same way.
//! With Ethernet flow control on ([`pause`]) ports send from explicit FIFOs
//! instead, since a PAUSE can stop a link with frames queued on it; so do
//! they when traffic of several 802.1p priorities is present ([`pfc`]).
//! How a switch allocates its buffer to ports is a [`buffer`] model.
//! A link may add a wide-area delay that changes over time ([`wan`]); a
//! host may take a random time to handle each frame it receives ([`host_jitter`]).
//! Under `link.token_bucket` every port is a token bucket in front of a line
//! that takes no time instead ([`token_bucket`]), as the testbed's `tbf`
//! ports are; each frame's departure is known when it is queued all the same.
//! **Not modelled (yet):** switch processing latency, cut-through switching.

pub mod bottleneck;
pub mod buffer;
pub mod clos;
pub mod ecmp;
pub mod fabric;
pub mod fabric_table;
pub mod frame;
pub mod host_jitter;
mod link;
mod packet;
pub mod pause;
pub mod pfc;
mod queue;
mod switch;
pub mod token_bucket;
mod topology;
pub mod wan;

pub use link::{ArrivalOrder, Link, LinkConfig};
pub use packet::{Direction, Packet, PacketPool, PktId};
pub use queue::{BufferLimit, BufferLimitSpec, DropTailQueue, OccupancyLog, Peaks, QueueLimit, QueueStats};
pub use switch::{dctcp_paper_k, Admission, RudePolicy, SwitchConfig, DCTCP_K_WORD};
pub use topology::{Network, Node, NodeId, Port, PortId};
