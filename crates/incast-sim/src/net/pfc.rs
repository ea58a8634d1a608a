//! Traffic classes (IEEE 802.1p priorities) and priority-based flow control
//! (IEEE 802.1Qbb PFC, MAC Control frame of IEEE 802.3 Annex 31D).
//!
//! **Models:** every frame carries one of eight priorities (the PCP of its
//! VLAN tag, 802.1Q §6.9.3): the synchronized reads, the background TCP
//! flows and the UDP source each have their own (`workload.priority`,
//! `background.priority`, `background.udp_priority`; a connection's ACKs
//! travel in its priority). When traffic of more than one priority is present,
//! every port (switch ports and host NICs) keeps one FIFO per priority and
//! serves the non-empty, unpaused FIFOs round robin, one frame at a time:
//! equal shares, the enhanced transmission selection (802.1Qaz §37.3) that
//! DCB switches apply by default to the classes of a lossless (RoCE)
//! configuration. With `qos:K` the port's buffer is split into K
//! partitions and priority p is admitted to partition ⌊p·K/8⌋ (K = 8 gives
//! each priority its own; K = 2 puts priorities 0–3 and 4–7 apart, as
//! 802.1Q's priority-to-class tables group neighbours); with `static` the
//! priorities share the port's buffer.
//! With `switch.pfc`, flow control is per priority: a port's FIFO of a
//! lossless priority (`switch.pfc_priorities`) that passes `xoff` bytes
//! sends a PFC frame naming only that priority in its class-enable vector
//! (802.3 §31D.3) to each link feeding it, with the time `quanta`; the
//! upstream port stops that priority's FIFO and keeps serving the others.
//! XON is a PFC frame with zero time for the priority. Requests to the same
//! link that wait behind a frame in transmission leave as one PFC frame,
//! their bits merged. Lossy priorities are never paused and drop at a full
//! buffer. A PFC frame takes the 64 bytes of a PAUSE frame on the wire.
//! **Lossless when:** a lossless priority drops nothing while its share of
//! the buffer (its `qos:K` partition, alone in it) exceeds `xoff` by the
//! headroom of every link that can feed it (`net::pause`); with `static`,
//! lossy priorities may take the shared buffer from it.
//! **Deliberately different:** a frame's priority comes from its
//! connection when a port queues it, not from a 4-byte VLAN tag: frames keep
//! their untagged size (`net::frame`) and the per-packet path is unchanged
//! when classes are off. Round robin per frame, not per byte
//! (deficit round robin); every priority has its own FIFO even when `qos:K`
//! puts two priorities in one buffer partition. Congestion is judged per
//! output-port FIFO, not per ingress priority group as switch headroom
//! calculations do.
//! **Not modelled:** strict-priority or weighted ETS schedulers, PFC
//! watchdogs and deadlock, priority rewriting (DSCP to PCP maps), PFC from
//! hosts.

use super::PktId;
use crate::settings::{python_repr, Count, Spec};
use crate::time::SimTime;
use serde_json::Value as Json;
use std::collections::VecDeque;

/// Number of IEEE 802.1p priorities (802.1Q §6.9.3: a 3-bit PCP).
pub const PRIORITIES: usize = 8;

/// A set of 802.1p priorities, bit p for priority p: the lossless priorities
/// of PFC, or a PFC frame's class-enable vector (802.3 §31D.3).
/// Written as a list of priorities, `[3]` or `[0, 1, 2]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PriorityMask(pub u8);

impl PriorityMask {
    /// Every priority.
    pub const ALL: PriorityMask = PriorityMask(0xFF);

    /// The set holding priority `p` alone.
    #[inline]
    pub fn of(p: u8) -> Self {
        PriorityMask(1 << p)
    }

    /// Is priority `p` in the set?
    #[inline]
    pub fn contains(self, p: u8) -> bool {
        self.0 & (1 << p) != 0
    }

    /// The priorities in the set, lowest first.
    pub fn iter(self) -> impl Iterator<Item = u8> {
        (0..PRIORITIES as u8).filter(move |&p| self.contains(p))
    }
}

impl Default for PriorityMask {
    fn default() -> Self {
        PriorityMask::ALL
    }
}

/// A set of priorities written as `"all"`, a list (`[3]`, `[0, 1, 2]`), one
/// number or a comma-separated string (`"3,4"`).
#[derive(Clone, Copy, Debug)]
pub struct Priorities;

impl Spec<PriorityMask> for Priorities {
    fn parse(&self, raw: &Json) -> Result<PriorityMask, String> {
        let allowed = "must be \"all\" or a list of 802.1p priorities between 0 and 7";
        if raw.as_str().is_some_and(|s| s.trim().eq_ignore_ascii_case("all")) {
            return Ok(PriorityMask::ALL);
        }
        let items: Vec<Json> = match raw {
            Json::Array(items) => items.clone(),
            Json::String(s) => s.split(',').map(|p| Json::String(p.to_owned())).collect(),
            Json::Number(_) => vec![raw.clone()],
            _ => return Err(format!("{allowed}, got {}", python_repr(raw))),
        };
        let mut mask = PriorityMask(0);
        for item in &items {
            let p: u8 = Count::new(0, 7, "").parse(item).map_err(|_| format!("{allowed}, got {}", python_repr(raw)))?;
            mask.0 |= 1 << p;
        }
        if mask.0 == 0 {
            return Err(format!("{allowed}; name at least one"));
        }
        Ok(mask)
    }
    fn toml(&self, value: &PriorityMask) -> Json {
        if *value == PriorityMask::ALL {
            Json::String("all".into())
        } else {
            Json::Array(value.iter().map(Json::from).collect())
        }
    }
    fn kind(&self) -> &'static str {
        "priorities"
    }
    fn allowed(&self) -> String {
        "\"all\" or a list of 802.1p priorities between 0 and 7".into()
    }
}

/// The buffer partition of priority `p` when a port's buffer is split into
/// `partitions` equal parts (`qos:K`): ⌊p·K/8⌋, neighbours grouped.
pub fn partition(p: u8, partitions: u32) -> usize {
    (u32::from(p) * partitions / PRIORITIES as u32) as usize
}

/// What a PFC frame tells its receiver: the priorities it stops for the
/// frame's time, and those it releases (time zero, XON). 802.3x PAUSE is the
/// frame that stops every priority. Aligned to 32 bits, as the engine's
/// other event fields are (`sim::Event`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(align(4))]
pub struct PfcFrame {
    /// Priorities paused for the configured quanta.
    pub xoff: u8,
    /// Priorities released.
    pub xon: u8,
}

impl PfcFrame {
    /// Fold a later request for the same link into a frame not yet sent:
    /// the later word on each priority wins.
    pub fn merge(self, later: PfcFrame) -> PfcFrame {
        let named = later.xoff | later.xon;
        PfcFrame { xoff: self.xoff & !named | later.xoff, xon: self.xon & !named | later.xon }
    }
}

/// Frames waiting at one port, one FIFO per priority, served round robin.
#[derive(Clone, Debug, Default)]
pub struct ClassQueues {
    /// Waiting frames (packet, arrival, frame bytes) of each priority, oldest first.
    fifos: [VecDeque<(PktId, SimTime, u32)>; PRIORITIES],
    /// Frame bytes each priority holds, from arrival until its last bit has left.
    bytes: [u64; PRIORITIES],
    /// Frames each priority holds, likewise.
    frames: [u32; PRIORITIES],
    /// The priority served last.
    last: u8,
}

impl ClassQueues {
    /// Queue a frame of `frame_bytes` and priority `p`, arrived at `now`.
    pub fn push(&mut self, pkt: PktId, p: u8, now: SimTime, frame_bytes: u32) {
        let i = usize::from(p);
        self.fifos[i].push_back((pkt, now, frame_bytes));
        self.bytes[i] += u64::from(frame_bytes);
        self.frames[i] += 1;
    }

    /// The next frame to send: the oldest of the first non-empty priority
    /// after the one served last that `paused` does not stop (802.1Qaz
    /// §37.3, equal shares). Returns (packet, priority, arrival, frame bytes).
    pub fn pop(&mut self, paused: impl Fn(u8) -> bool) -> Option<(PktId, u8, SimTime, u32)> {
        let start = self.last;
        for k in 1..=PRIORITIES as u8 {
            let p = (start + k) % PRIORITIES as u8;
            if paused(p) {
                continue;
            }
            if let Some((pkt, at, b)) = self.fifos[usize::from(p)].pop_front() {
                self.last = p;
                return Some((pkt, p, at, b));
            }
        }
        None
    }

    /// A frame of priority `p` and `frame_bytes` has left the port.
    pub fn on_sent(&mut self, p: u8, frame_bytes: u32) {
        self.bytes[usize::from(p)] -= u64::from(frame_bytes);
        self.frames[usize::from(p)] -= 1;
    }

    /// Frame bytes and frames priority `p` holds.
    #[inline]
    pub fn held(&self, p: u8) -> (u64, u32) {
        (self.bytes[usize::from(p)], self.frames[usize::from(p)])
    }

    /// Every frame still waiting: (packet, arrival).
    pub fn waiting(&self) -> impl Iterator<Item = (PktId, SimTime)> + '_ {
        self.fifos.iter().flatten().map(|&(pkt, at, _)| (pkt, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::PacketPool;

    fn pkts(n: usize) -> Vec<PktId> {
        let mut pool = PacketPool::default();
        let p = crate::net::Packet {
            seg: Default::default(),
            flow: 0,
            dir: crate::net::Direction::ToClient,
            dst: 0,
            tcp_bytes: 0,
        };
        (0..n).map(|_| pool.alloc(p)).collect()
    }

    /// 802.1Qaz §37.3 with equal shares: two busy priorities alternate frame
    /// by frame; each priority stays in arrival order.
    #[test]
    fn busy_priorities_alternate_frame_by_frame() {
        let id = pkts(4);
        let mut q = ClassQueues::default();
        for (i, p) in [(0, 3), (1, 3), (2, 0), (3, 0)] {
            q.push(id[i], p, SimTime(i as u64), 1518);
        }
        let order: Vec<_> = std::iter::from_fn(|| q.pop(|_| false)).map(|(pkt, p, ..)| (pkt, p)).collect();
        assert_eq!(order, [(id[0], 3), (id[2], 0), (id[1], 3), (id[3], 0)]);
        assert_eq!(q.held(3), (2 * 1518, 2), "a frame counts until it has left");
        q.on_sent(3, 1518);
        assert_eq!(q.held(3), (1518, 1));
    }

    /// 802.1Qbb: a paused priority keeps its frames while the others are
    /// served; released, it is served again.
    #[test]
    fn ieee802_1qbb_a_paused_priority_waits_while_others_flow() {
        let id = pkts(3);
        let mut q = ClassQueues::default();
        q.push(id[0], 3, SimTime(0), 1518);
        q.push(id[1], 0, SimTime(1), 1518);
        q.push(id[2], 0, SimTime(2), 64);
        let paused = |p| p == 3;
        assert_eq!(q.pop(paused).map(|f| f.0), Some(id[1]));
        assert_eq!(q.pop(paused).map(|f| f.0), Some(id[2]));
        assert_eq!(q.pop(paused), None, "priority 3 is paused");
        assert_eq!(q.pop(|_| false).map(|f| (f.0, f.1)), Some((id[0], 3)));
    }

    /// 802.3 §31D.3: a later request for a priority replaces the earlier one;
    /// other priorities' requests stay in the same frame.
    #[test]
    fn ieee802_3_31d_merged_requests_keep_the_latest_word_per_priority() {
        let f = PfcFrame { xoff: 0b1000, xon: 0 };
        let f = f.merge(PfcFrame { xoff: 0b0001, xon: 0 });
        assert_eq!(f, PfcFrame { xoff: 0b1001, xon: 0 });
        let f = f.merge(PfcFrame { xoff: 0, xon: 0b1000 });
        assert_eq!(f, PfcFrame { xoff: 0b0001, xon: 0b1000 });
    }

    /// qos:2 puts priorities 0–3 and 4–7 apart; qos:8 gives each its own.
    #[test]
    fn partitions_group_neighbouring_priorities() {
        assert_eq!((0..8).map(|p| partition(p, 2)).collect::<Vec<_>>(), [0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!((0..8).map(|p| partition(p, 8)).collect::<Vec<_>>(), [0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(partition(7, 1), 0);
    }

    #[test]
    fn priority_lists_parse_into_masks_and_reject_unknown_priorities() {
        let m = Priorities.parse(&serde_json::json!([3, 4])).unwrap();
        assert_eq!(m, PriorityMask(0b1_1000));
        assert_eq!(Priorities.toml(&m), serde_json::json!([3, 4]));
        assert_eq!(Priorities.parse(&serde_json::json!("3,4")), Ok(m));
        assert_eq!(Priorities.toml(&PriorityMask::ALL), serde_json::json!("all"));
        let err = Priorities.parse(&serde_json::json!([8])).unwrap_err();
        assert_eq!(err, "must be \"all\" or a list of 802.1p priorities between 0 and 7, got [8]");
    }
}
