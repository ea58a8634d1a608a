//! How a switch allocates its packet memory to output ports.
//!
//! **Models:** three buffer models. `static`: every port owns `buffer`
//! (FAST08 §3.2's per-port estimate). `qos`: each port's buffer is split
//! into K equal class partitions; traffic all in one priority uses one
//! of them, so a flow sees `buffer / K` — why enabling QoS brought collapse
//! earlier on the Force10 S50 (FAST08 §4.1); traffic in several 802.1p
//! priorities is admitted to each priority's partition (`net::pfc`). `shared`: the switch's ports share one memory
//! of `buffer` × (its number of ports) bytes, and a port may take a frame only
//! while its queue stays within α times the memory still free — the dynamic
//! threshold of Choudhury and Hahne ("Dynamic queue length thresholds for
//! shared-memory packet switches", IEEE/ACM ToN 6(2), 1998), how commodity
//! switches allocate buffer.
//! **Deliberately different:** in the shared model the threshold is checked
//! against the memory free at the frame's arrival, with frames leaving the
//! memory when their last bit has left (as in every port here).
//! **Not modelled:** reserved per-port minimums in shared memory, shared
//! memory together with PAUSE or traffic classes.

use crate::settings::{python_repr, Spec};
use crate::time::SimTime;
use serde_json::Value as Json;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// How each switch allocates its buffer.
///
/// Default value: `static`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BufferModel {
    /// Every output port owns `switch.buffer`.
    #[default]
    Static,
    /// Each port's buffer is split over `classes` QoS classes; traffic of
    /// one priority is in one of them (FAST08 §4.1), priority p in class
    /// ⌊p·K/8⌋ (`net::pfc::partition`).
    Qos {
        /// Number of classes sharing a port's buffer equally.
        classes: u32,
    },
    /// One memory per switch, `switch.buffer` per port, with dynamic
    /// thresholds (Choudhury–Hahne): a port may hold up to α × free memory.
    Shared {
        /// α in thousandths (1000: α = 1).
        alpha_thousandths: u32,
    },
}

/// A buffer model written as `"static"`, `"qos:K"` (K classes, 1 to 64) or
/// `"shared:ALPHA"` (α from 0.001 to 10^6, kept in thousandths).
#[derive(Clone, Copy, Debug)]
pub struct BufferModelSpec;

impl Spec<BufferModel> for BufferModelSpec {
    fn parse(&self, raw: &Json) -> Result<BufferModel, String> {
        let text = raw.as_str().map(|s| s.trim().to_ascii_lowercase()).unwrap_or_default();
        let (kind, arg) = text.split_once(':').unwrap_or((&text, ""));
        let model = match kind {
            "static" if arg.is_empty() && !text.contains(':') => Some(BufferModel::Static),
            "qos" => {
                arg.parse::<u32>().ok().filter(|k| (1..=64).contains(k)).map(|classes| BufferModel::Qos { classes })
            }
            "shared" => arg
                .parse::<f64>()
                .ok()
                .filter(|a| (0.001..=1e6).contains(a))
                .map(|a| BufferModel::Shared { alpha_thousandths: (a * 1000.0).round_ties_even() as u32 }),
            _ => None,
        };
        model.ok_or_else(|| format!("must be {}, got {}", self.allowed(), python_repr(raw)))
    }
    fn toml(&self, value: &BufferModel) -> Json {
        Json::String(match value {
            BufferModel::Static => "static".into(),
            BufferModel::Qos { classes } => format!("qos:{classes}"),
            BufferModel::Shared { alpha_thousandths } => {
                let (int, frac) = (alpha_thousandths / 1000, alpha_thousandths % 1000);
                let frac = format!("{frac:03}");
                let frac = frac.trim_end_matches('0');
                if frac.is_empty() {
                    format!("shared:{int}")
                } else {
                    format!("shared:{int}.{frac}")
                }
            }
        })
    }
    fn kind(&self) -> &'static str {
        "buffer model"
    }
    fn allowed(&self) -> String {
        "\"static\", \"qos:K\" (K QoS classes, 1 to 64) or \"shared:ALPHA\" (e.g. \"shared:1\")".into()
    }
}

/// The shared memory of one switch.
#[derive(Clone, Debug)]
pub struct SharedPool {
    capacity: u64,
    alpha_thousandths: u64,
    bytes: u64,
    /// (departure, frame bytes) of every frame held, earliest first.
    departures: BinaryHeap<Reverse<(SimTime, u32)>>,
}

impl SharedPool {
    /// An empty memory of `capacity` bytes with threshold factor α = `alpha_thousandths` / 1000.
    pub fn new(capacity: u64, alpha_thousandths: u32) -> Self {
        SharedPool {
            capacity,
            alpha_thousandths: u64::from(alpha_thousandths),
            bytes: 0,
            departures: BinaryHeap::new(),
        }
    }

    /// Most bytes a port's queue may hold at `now`: α × the memory free
    /// (Choudhury–Hahne), and never more than the memory free plus what
    /// the port already holds.
    pub fn threshold(&mut self, now: SimTime, port_bytes: u64) -> u64 {
        while let Some(&Reverse((done, b))) = self.departures.peek() {
            if done > now {
                break;
            }
            self.bytes -= u64::from(b);
            self.departures.pop();
        }
        let free = self.capacity - self.bytes;
        (free.saturating_mul(self.alpha_thousandths) / 1000).min(port_bytes + free)
    }

    /// A frame of `frame_bytes` was admitted; it leaves the memory at `done`.
    pub fn push(&mut self, done: SimTime, frame_bytes: u64) {
        self.bytes += frame_bytes;
        self.departures.push(Reverse((done, frame_bytes as u32)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Choudhury–Hahne: with α = 1 one port may fill half of an idle memory
    /// (q ≤ free = M − q), and the threshold rises as other frames leave.
    #[test]
    fn alpha_one_lets_a_lone_port_take_half_the_memory() {
        let mut pool = SharedPool::new(1000, 1000);
        let mut q = 0;
        while q + 100 <= pool.threshold(SimTime(0), q) {
            pool.push(SimTime(10), 100);
            q += 100;
        }
        assert_eq!(q, 500);
        assert_eq!(pool.threshold(SimTime(10), 0), 1000, "everything has left");
    }

    /// α = 2 lets a lone port take two thirds; α = 1/2 one third.
    #[test]
    fn larger_alpha_gives_a_lone_port_more() {
        let fill = |alpha| {
            let mut pool = SharedPool::new(3000, alpha);
            let mut q = 0;
            while q + 10 <= pool.threshold(SimTime(0), q) {
                pool.push(SimTime(10), 10);
                q += 10;
            }
            q
        };
        assert_eq!(fill(2000), 2000);
        assert_eq!(fill(500), 1000);
    }
}
