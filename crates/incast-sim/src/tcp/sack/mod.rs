//! SACK-based loss recovery: the RFC 6675 scoreboard, `pipe` and `NextSeg`.
//!
//! **Models:** the sender's scoreboard of SACKed ranges above HighACK
//! (SND.UNA), updated from every ACK's SACK blocks (RFC 6675 §4 `Update`);
//! `IsLost` — an unSACKed octet is lost once `DupThresh` SACKed segments, or
//! more than (`DupThresh` − 1)·SMSS SACKed bytes, lie above it (§4); `SetPipe`
//! — the unSACKed octets between HighACK and HighData that are not lost, or
//! that were retransmitted (below HighRxt) (§4); `NextSeg` rules (1)–(4),
//! including the single rescue retransmission per recovery (§4); entry into
//! loss recovery on the `DupThresh`-th duplicate ACK or when `IsLost(HighACK)`
//! (§5 steps 1, 2, 4), its end at the cumulative ACK of RecoveryPoint (§5
//! step A), and the rule that a timeout ends recovery and forbids a new one
//! until HighACK reaches the new RecoveryPoint (§5.1).
//!
//! A duplicate ACK here is RFC 5681's (same ACK number, no data, same
//! window, data outstanding) that also SACKs octets not SACKed before
//! (RFC 6675 §2).
//!
//! Sequence offsets are one-past-the-end, as everywhere in `tcp`: HighData is
//! SND.MAX, HighRxt and RescueRxt are one past the highest octet
//! retransmitted, RecoveryPoint is SND.MAX when recovery began, and "HighACK >
//! RecoveryPoint" reads `high_ack >= recovery_point`.
//!
//! **Deliberately different:** the scoreboard survives a retransmission
//! timeout and the sender's slow-start retransmissions skip SACKed data, as
//! Linux does (`tcp_enter_loss` keeps SACK marks unless it detects
//! reneging); RFC 2018 §8 and RFC 6675 §5.1 would expunge it, to guard against
//! receivers that discard SACKed data — which the receivers here never do.
//! The window cut on entry is the congestion-control algorithm's ssthresh
//! (`tcp::cc`: RFC 5681 eq. 4, or Cubic's β).
//! With `sack_recovery = "ns2"` the recovery is ns-2.35's `Agent/TCP/Sack1`
//! (`tcp/tcp-sack1.cc`, `tcp/scoreboard-rq.cc`) instead of RFC 6675's:
//! - `pipe_` is an estimate, not a count: the data outstanding at the third
//!   duplicate ACK less `numdupacks_` segments (`dupack_action`), one segment
//!   less per ACK that arrives in recovery and one more less per partial ACK
//!   (`recv`), one more per segment `send_much` sends (the fast retransmission
//!   itself not counted). Holes are never taken out of it, so a window that
//!   lost more than half its segments cannot send until partial ACKs bring
//!   it down;
//! - while `pipe_ < int(cwnd_)` it sends the next hole below the highest
//!   SACKed segment from where it last retransmitted (`GetNextRetran`: no
//!   `IsLost` test, no rescue retransmission), else new data;
//! - the scoreboard is cleared by every cumulative ACK outside recovery and by
//!   the one that ends it, and by a timeout, after which no SACK block is read
//!   (`timeout_`) until a new cumulative ACK: the timer's go-back-N resends
//!   SACKed data too.
//!
//! With `sack_recovery = "linux"` the sender resends only what is marked lost
//! and then sends new data, as Linux's `tcp_xmit_retransmit_queue` does
//! ("if (tp->retrans_out >= tp->lost_out) break"; segments not marked lost
//! are skipped): no `NextSeg` rule (3), which Linux ran as "forward
//! retransmission" until 4.15 ("tcp: remove forward retransmit feature"),
//! and no rescue retransmission (4), which it never had (TLP probes the tail
//! instead). Rules (3) and (4) resend segments still on their way whenever
//! nothing lost or new is left to send.
//!
//! With RACK on (`tcp::rack_tlp`), an octet is also lost below the boundary
//! RACK's clock sets ([`Scoreboard::set_rack_lost`]); with PRR on
//! (`tcp::prr`), the sender sizes cwnd per ACK during recovery.
//! **Not modelled:** D-SACK (RFC 2883), reneging.

/// Whose SACK loss recovery the sender runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SackRecovery {
    /// RFC 6675: `IsLost`, `SetPipe` and `NextSeg`.
    #[default]
    Rfc6675,
    /// ns-2.35's `Agent/TCP/Sack1`: an estimated `pipe_` and every hole
    /// below the highest SACK resent in order (module doc).
    Ns2,
    /// Linux (4.15 on) `tcp_xmit_retransmit_queue`: RFC 6675 with `NextSeg`
    /// rules (1) and (2) only (module doc).
    Linux,
    /// RFC 6675 as ns-3.44 runs it: no rescue retransmission, a pipe that
    /// keeps a retransmitted segment once it is SACKed, ns-3's sending after
    /// a timeout and its retransmission timer in recovery (the sender's part,
    /// `Sender::ns3_pipe`).
    Ns3,
}

/// What a scoreboard held lost at one moment ([`Scoreboard::lost_marks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LostMarks {
    boundary: u64,
    relost: Option<(u64, u64)>,
}

/// Which `NextSeg` rule (RFC 6675 §4) chose a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextSegRule {
    /// Rule (1): the first unSACKed, lost octet above HighRxt.
    Lost,
    /// Rule (2): previously unsent data.
    New,
    /// Rule (3): the first unSACKed octet above HighRxt below the highest SACK.
    Unsacked,
    /// Rule (4): the rescue retransmission of the highest outstanding octet.
    Rescue,
}

/// The SACK scoreboard and RFC 6675 recovery state of one sender.
#[derive(Clone, Debug)]
pub struct Scoreboard {
    smss: u64,
    dupthresh: u32,
    /// SACKed `[start, end)` ranges above HighACK: sorted, disjoint, non-adjacent.
    sacked: Vec<(u64, u64)>,
    /// Duplicate ACKs counted outside loss recovery.
    dupacks: u32,
    in_recovery: bool,
    /// One past the highest octet retransmitted in this recovery (HighRxt).
    high_rxt: u64,
    /// One past the rescue retransmission's octet (RescueRxt); `None` = undefined.
    rescue_rxt: Option<u64>,
    /// SND.MAX when the last recovery or timeout began (RecoveryPoint).
    recovery_point: Option<u64>,
    /// Detect lost retransmissions (Linux), not in RFC 6675.
    lost_retransmit: bool,
    /// HighData when the first retransmission since HighRxt last restarted
    /// went out: a SACK of data at or above it was sent after that
    /// retransmission, so a retransmitted hole still missing was lost again.
    rxt_high_data: Option<u64>,
    /// Every unSACKed octet below it is lost by RACK's clock (`tcp::rack_tlp`); 0 without RACK.
    rack_lost: u64,
    /// Retransmitted octets `[start, end)` RACK's clock found lost again
    /// (`tcp::rack_tlp`), to be resent before anything else.
    rack_relost: Option<(u64, u64)>,
    /// ns-2.35's `Sack1` recovery in place of RFC 6675's.
    ns2: bool,
    /// `NextSeg` rules (3) and (4) (not with Linux's recovery).
    forward: bool,
    /// `NextSeg` rule (4), the rescue retransmission (not with ns-3's
    /// recovery: `TcpTxBuffer::NextSeg`, "we choose to not respect the SHOULD").
    rescue: bool,
    /// ns-3.44's recovery (`SackRecovery::Ns3`).
    ns3: bool,
    /// In a recovery begun in the loss state after a timeout, every unSACKed
    /// octet below it (HighData at the timeout) is lost (Linux
    /// `tcp_timeout_mark_lost`); 0 otherwise.
    timeout_lost: u64,
    /// HighData at the last timeout.
    timeout_high: u64,
    /// A partial ACK came in this recovery.
    partial_acked: bool,
    /// ns-2's `pipe_` in bytes (it may go below zero).
    ns2_pipe: i64,
    /// ns-2's `timeout_`: SACK blocks are not read until a new cumulative ACK.
    deaf: bool,
    /// The lost marks below it have been counted (`Scoreboard::take_newly_lost`).
    lost_counted: u64,
}

impl Scoreboard {
    /// An empty scoreboard; `dupthresh` is the duplicate-ACK threshold;
    /// `lost_retransmit` turns on the detection of lost retransmissions.
    pub fn new(smss: u32, dupthresh: u32, lost_retransmit: bool) -> Self {
        Scoreboard {
            smss: smss.max(1) as u64,
            dupthresh: dupthresh.max(1),
            sacked: Vec::with_capacity(8),
            dupacks: 0,
            in_recovery: false,
            high_rxt: 0,
            rescue_rxt: None,
            recovery_point: None,
            lost_retransmit,
            rxt_high_data: None,
            rack_lost: 0,
            rack_relost: None,
            ns2: false,
            forward: true,
            rescue: true,
            ns3: false,
            timeout_lost: 0,
            timeout_high: 0,
            partial_acked: false,
            ns2_pipe: 0,
            deaf: false,
            lost_counted: 0,
        }
    }

    /// The same, recovering by `rule`.
    pub fn with_recovery(mut self, rule: SackRecovery) -> Self {
        self.ns2 = rule == SackRecovery::Ns2;
        self.forward = rule != SackRecovery::Linux;
        self.rescue = rule != SackRecovery::Ns3;
        self.ns3 = rule == SackRecovery::Ns3;
        self
    }

    /// Recovering as ns-3.44 does: the sender counts its pipe and sends after
    /// a timeout as ns-3's (`Sender::ns3_pipe`).
    #[inline]
    pub fn is_ns3(&self) -> bool {
        self.ns3
    }

    /// HighData at the last timeout (0 before any): ns-3 holds every
    /// unSACKed segment below it lost (`TcpTxBuffer::SetSentListLost`).
    #[inline]
    pub fn timeout_high(&self) -> u64 {
        self.timeout_high
    }

    /// `seq` is marked lost as ns-3's `TcpTxBuffer` marks it: unSACKed when
    /// the last timeout came (`SetSentListLost`), or with DupThresh segments
    /// SACKed above it (`UpdateLostCount`, as [`Scoreboard::is_lost`]).
    #[inline]
    pub fn ns3_lost(&self, seq: u64) -> bool {
        seq < self.timeout_high || self.is_lost(seq)
    }

    /// True with Linux's recovery (`SackRecovery::Linux`), which may start
    /// at any ACK that SACKs data, not only at a duplicate one (`tcp_ack`'s
    /// "dubious" ACKs go to `tcp_fastretrans_alert`).
    #[inline]
    pub fn recovers_on_any_ack(&self) -> bool {
        !self.forward
    }

    /// A partial ACK in recovery: true for the first of this recovery.
    pub fn first_partial_ack(&mut self) -> bool {
        !std::mem::replace(&mut self.partial_acked, true)
    }

    /// True during RFC 6675 loss recovery.
    #[inline]
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// True when nothing above HighACK is SACKed.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.sacked.is_empty()
    }

    /// The SACKed ranges, lowest first.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.sacked
    }

    /// Duplicate ACKs counted since the last cumulative ACK.
    #[inline]
    pub fn dupacks(&self) -> u32 {
        self.dupacks
    }

    /// HighRxt: one past the highest octet retransmitted in this recovery.
    #[inline]
    pub fn high_rxt(&self) -> u64 {
        self.high_rxt
    }

    /// RFC 6675 §4 `Update`: record the SACK `blocks` of an ACK whose
    /// cumulative acknowledgment is `high_ack`, and forget what it covers.
    /// Returns true when some octet was SACKed for the first time.
    pub fn update(&mut self, high_ack: u64, blocks: impl Iterator<Item = (u64, u64)>) -> bool {
        if self.deaf {
            // ns-2.35 Sack1TcpAgent::recv: after a timeout, "else if (timeout_ == FALSE)".
            return false;
        }
        let below = self.sacked.partition_point(|&(_, e)| e <= high_ack);
        self.sacked.drain(..below);
        if let Some(first) = self.sacked.first_mut() {
            first.0 = first.0.max(high_ack);
        }
        let mut news = false;
        let mut after_rxt = false;
        for (s, e) in blocks {
            let s = s.max(high_ack);
            if s < e {
                let new = self.insert(s, e);
                news |= new;
                after_rxt |= new && self.rxt_high_data.is_some_and(|mark| e > mark);
            }
        }
        // DEVIATION (Linux): RFC 6675 never retransmits an octet twice in one
        // recovery. Linux (tcp_sacktag_write_queue, "lost retransmit") marks a
        // retransmitted hole lost again once data sent after the retransmission
        // is SACKed; HighRxt falls back so NextSeg rule (1) resends it.
        if self.lost_retransmit && self.in_recovery && after_rxt && self.unsacked_in(high_ack, self.high_rxt) > 0 {
            self.high_rxt = high_ack;
            self.rxt_high_data = None;
        }
        news
    }

    /// Insert `[start, end)`, merging; true if it covered an octet not yet SACKed.
    fn insert(&mut self, start: u64, end: u64) -> bool {
        let i = self.sacked.partition_point(|&(_, e)| e < start);
        let j = i + self.sacked[i..].partition_point(|&(s, _)| s <= end);
        if i == j {
            self.sacked.insert(i, (start, end));
            return true;
        }
        let (lo, hi) = (start.min(self.sacked[i].0), end.max(self.sacked[j - 1].1));
        let covered: u64 = self.sacked[i..j].iter().map(|&(s, e)| e - s).sum();
        self.sacked[i] = (lo, hi);
        self.sacked.drain(i + 1..j);
        hi - lo > covered
    }

    /// SACKed segments in a range of `bytes` bytes: a partial segment counts as one.
    #[inline]
    fn segments(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.smss)
    }

    /// Every unSACKed octet below this offset is lost: by RFC 6675 §4
    /// `IsLost` or by RACK (`tcp::rack_tlp`, when on); 0 when none is.
    #[inline]
    pub fn lost_boundary(&self) -> u64 {
        self.dupthresh_boundary().max(self.rack_lost).max(self.timeout_lost)
    }

    /// RACK found every unSACKed octet below `boundary` lost.
    #[inline]
    pub fn set_rack_lost(&mut self, boundary: u64) {
        self.rack_lost = boundary;
    }

    /// RACK found the retransmitted octets `[start, end)` lost again (Linux
    /// `tcp_rack_mark_skb_lost`: "retransmits that are lost again"): they
    /// leave `pipe` and `NextSeg` resends them first.
    #[inline]
    pub fn set_rack_relost(&mut self, range: Option<(u64, u64)>) {
        self.rack_relost = range;
    }

    /// The lost marks now, so that [`Scoreboard::newly_lost`] can tell what
    /// an ACK added.
    #[inline]
    pub fn lost_marks(&self) -> LostMarks {
        LostMarks { boundary: self.lost_boundary(), relost: self.rack_relost }
    }

    /// Whether unSACKed octets at or above `high_ack` were marked lost since
    /// `before`, or a retransmission found lost again (Linux counts both in
    /// `tp->lost`, whose growth on an ACK is `tcp_cwnd_reduction`'s `newly_lost`).
    #[inline]
    pub fn newly_lost(&self, before: LostMarks, high_ack: u64) -> bool {
        self.unsacked_in(before.boundary.max(high_ack), self.lost_boundary()) > 0
            || self.rack_relost.is_some() && self.rack_relost != before.relost
    }

    /// UnSACKed octets at or above `high_ack` that the lost marks took in
    /// since the last call, each counted once (Linux `tcp_mark_skb_lost`
    /// adding to `tp->lost`, which BBR reads as `rs->losses`); a timeout
    /// counts what was outstanding itself ([`Scoreboard::on_timeout`]).
    pub fn take_newly_lost(&mut self, high_ack: u64) -> u64 {
        let (from, to) = (self.lost_counted.max(high_ack), self.lost_boundary());
        self.lost_counted = self.lost_counted.max(to);
        self.unsacked_in(from, to)
    }

    /// Every unSACKed octet below this offset is lost by RFC 6675 §4
    /// `IsLost`; 0 when none is. `IsLost` is monotone: fewer octets lie SACKed
    /// above a higher octet, so one boundary answers it for all.
    pub fn dupthresh_boundary(&self) -> u64 {
        let (mut bytes, mut segments) = (0, 0);
        for &(s, e) in self.sacked.iter().rev() {
            bytes += e - s;
            segments += self.segments(e - s);
            // "DupThresh discontiguous SACKed sequences ... or more than
            // (DupThresh - 1) * SMSS bytes ... have been SACKed" above it.
            if segments >= self.dupthresh as u64 || bytes > (self.dupthresh as u64 - 1) * self.smss {
                return s;
            }
        }
        0
    }

    /// RFC 6675 §4 `IsLost(seq)` for an unSACKed octet `seq`.
    #[inline]
    pub fn is_lost(&self, seq: u64) -> bool {
        seq < self.lost_boundary()
    }

    /// UnSACKed octets in `[a, b)`.
    fn unsacked_in(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        let sacked: u64 = self.sacked.iter().map(|&(s, e)| e.min(b).saturating_sub(s.max(a))).sum();
        (b - a) - sacked
    }

    /// SACKed octets in `[a, b)`.
    pub fn sacked_in(&self, a: u64, b: u64) -> u64 {
        (b.saturating_sub(a)) - self.unsacked_in(a, b)
    }

    /// RFC 6675 §4 `SetPipe`: octets between `high_ack` and `high_data` that
    /// are unSACKed and either not lost or already retransmitted (below HighRxt).
    pub fn pipe(&self, high_ack: u64, high_data: u64) -> u64 {
        let lost = self.lost_boundary().clamp(high_ack, high_data);
        let resent = self.high_rxt.clamp(high_ack, lost);
        // Lost again after their retransmission: out of the network (Linux
        // tcp_rack_mark_skb_lost takes them out of retrans_out).
        let relost = self.rack_relost.map_or(0, |(s, e)| self.unsacked_in(s.max(high_ack), e.min(resent)));
        // "(a) If IsLost (S1) returns false: Pipe is incremented" — octets above
        // the boundary; "(b) If S1 <= HighRxt" — lost octets already resent.
        self.unsacked_in(lost, high_data) + self.unsacked_in(high_ack, resent) - relost
    }

    /// [`Scoreboard::pipe`] as ns-3 counts it at a fast retransmit: a head
    /// (the `mss` octets at `high_ack`) that `IsLost` does not yet call lost
    /// is marked lost and leaves the pipe, resent or not (`MarkHeadAsLost`,
    /// called only then, clears its retransmitted mark too); a head already
    /// lost stays as `pipe` counts it.
    pub fn pipe_head_lost(&self, high_ack: u64, high_data: u64, mss: u64) -> u64 {
        let head = high_ack + mss.min(high_data - high_ack);
        let marked = if self.is_lost(high_ack) { 0 } else { self.unsacked_in(high_ack, head) };
        self.pipe(high_ack, high_data) - marked
    }

    /// The first unSACKed octet at or above `seq`, and where the unSACKed run
    /// starting there ends (the next SACKed range, or `u64::MAX`).
    pub fn hole_at(&self, seq: u64) -> (u64, u64) {
        let i = self.sacked.partition_point(|&(_, e)| e <= seq);
        match self.sacked.get(i) {
            Some(&(s, e)) if s <= seq => (e, self.sacked.get(i + 1).map_or(u64::MAX, |r| r.0)),
            Some(&(s, _)) => (seq, s),
            None => (seq, u64::MAX),
        }
    }

    /// A duplicate ACK (RFC 6675 §2) outside recovery: count it and return
    /// true when loss recovery must begin (§5 steps 1, 2 and 4), given HighACK.
    pub fn on_dup_ack(&mut self, high_ack: u64) -> bool {
        if self.in_recovery {
            return false;
        }
        self.dupacks = self.dupacks.saturating_add(1);
        if !self.past_recovery_point(high_ack) {
            return false;
        }
        if self.ns2 {
            // Sack1TcpAgent::recv: "if (++dupacks_ == numdupacks(cwnd_))".
            return self.dupacks == self.dupthresh;
        }
        self.dupacks >= self.dupthresh || self.is_lost(high_ack)
    }

    /// RACK's reordering timer found the segment at HighACK `high_ack` lost
    /// with no ACK to count: true when that starts loss recovery (as
    /// [`Scoreboard::on_dup_ack`] would, without counting a duplicate).
    pub fn loss_found(&self, high_ack: u64) -> bool {
        !self.in_recovery && self.past_recovery_point(high_ack) && self.is_lost(high_ack)
    }

    /// Whether HighACK `high_ack` lets a new recovery begin. RFC 6675 (5.1):
    /// after a timeout "a new recovery phase ... MUST NOT be initiated until
    /// HighACK is greater than or equal to the new value of RecoveryPoint."
    /// ns-2.35 Sack1TcpAgent::dupack_action: "highest_ack_ > recover_", the
    /// last segment sent before the timeout acknowledged and one more.
    #[inline]
    fn past_recovery_point(&self, high_ack: u64) -> bool {
        !self.recovery_point.is_some_and(|rp| high_ack < rp || self.ns2 && high_ack == rp)
    }

    /// A cumulative ACK moved HighACK to `high_ack`. Returns true when it ends
    /// loss recovery (RFC 6675 §5 step A).
    pub fn on_cumulative_ack(&mut self, high_ack: u64) -> bool {
        self.dupacks = 0;
        if self.ns2 {
            return self.ns2_on_cumulative_ack(high_ack);
        }
        if self.in_recovery && self.recovery_point.is_some_and(|rp| high_ack >= rp) {
            self.in_recovery = false;
            self.rxt_high_data = None;
            self.timeout_lost = 0;
            return true;
        }
        false
    }

    /// [`Scoreboard::on_cumulative_ack`] for ns-2.35's `Sack1`.
    #[cold]
    fn ns2_on_cumulative_ack(&mut self, high_ack: u64) -> bool {
        self.deaf = false;
        if self.is_partial(high_ack) {
            // Sack1TcpAgent::recv: a partial ACK, "--pipe_" once more.
            self.ns2_pipe -= self.smss as i64;
            return false;
        }
        // "scb_->ClearScoreBoard()" on every new ACK outside recovery and on
        // the one that ends it, which also sets "recover_ = 0": the next
        // third duplicate ACK may start a recovery whatever its ACK number.
        self.sacked.clear();
        let ended = self.in_recovery;
        if ended {
            self.recovery_point = None;
        }
        self.in_recovery = false;
        ended
    }

    /// True when an ACK of new data up to `high_ack` leaves recovery going on.
    #[inline]
    pub fn is_partial(&self, high_ack: u64) -> bool {
        self.in_recovery && self.recovery_point.is_some_and(|rp| high_ack < rp)
    }

    /// An ACK arrived: in ns-2.35's `Sack1` recovery each one takes a
    /// segment out of `pipe_` ("--pipe_" in `Sack1TcpAgent::recv`).
    #[inline]
    pub fn on_ack(&mut self) {
        if self.ns2 && self.in_recovery {
            self.ns2_pipe -= self.smss as i64;
        }
    }

    /// RFC 6675 (5 step C): true when cwnd − pipe ≥ 1 SMSS, so recovery may
    /// send a segment; ns-2.35's `Sack1` sends while `pipe_ < int(cwnd_)`.
    #[inline]
    pub fn may_send(&self, cwnd: u64, high_ack: u64, high_data: u64) -> bool {
        if self.ns2 {
            return self.ns2_pipe + (self.smss as i64) <= (cwnd / self.smss * self.smss) as i64;
        }
        cwnd >= self.pipe(high_ack, high_data) + self.smss
    }

    /// Enter loss recovery with HighData = `high_data` (§5 step 4.1). Returns
    /// `(seq, len)` of the segment at HighACK, which the caller retransmits now
    /// (§5 step 4.3: "set both HighRxt and RescueRxt" to its end).
    pub fn enter_recovery(&mut self, high_ack: u64, high_data: u64) -> (u64, u64) {
        self.in_recovery = true;
        self.partial_acked = false;
        self.recovery_point = Some(high_data);
        let (start, run_end) = self.hole_at(high_ack);
        let end = (start + self.smss).min(run_end).min(high_data);
        self.high_rxt = end;
        self.rescue_rxt = Some(end);
        self.rxt_high_data = Some(high_data);
        // Sack1TcpAgent::dupack_action: "pipe_ = maxseq_ - highest_ack_ - numdupacks(cwnd_)".
        self.ns2_pipe = (high_data - high_ack) as i64 - (self.dupthresh as u64 * self.smss) as i64;
        (start, end - start)
    }

    /// Loss recovery begins in the loss state after a timeout (Linux
    /// `tcp_enter_recovery` from `TCP_CA_Loss`), HighData being `high_data`:
    /// what the timeout's go-back-N resent, below `resent_to`, counts as
    /// retransmitted (HighRxt), and every unSACKed octet below `timeout_high`
    /// (HighData at the timeout) as lost. No segment is due at once: RACK's
    /// marks of retransmissions lost again go first.
    pub fn enter_recovery_after_timeout(&mut self, resent_to: u64, high_data: u64, timeout_high: u64) {
        self.in_recovery = true;
        self.partial_acked = false;
        self.recovery_point = Some(high_data);
        self.high_rxt = resent_to;
        self.rescue_rxt = Some(resent_to);
        self.rxt_high_data = Some(high_data);
        self.timeout_lost = timeout_high;
    }

    /// A retransmission timeout with HighData = `high_data` (RFC 6675 §5.1):
    /// recovery ends and RecoveryPoint moves to HighData.
    pub fn on_timeout(&mut self, high_data: u64) {
        self.in_recovery = false;
        self.recovery_point = Some(high_data);
        self.timeout_high = high_data;
        self.dupacks = 0;
        self.rxt_high_data = None;
        self.rack_lost = 0;
        self.rack_relost = None;
        self.timeout_lost = 0;
        self.lost_counted = self.lost_counted.max(high_data);
        if self.ns2 {
            // Sack1TcpAgent::timeout: "timeout_ = TRUE; ... scb_->ClearScoreBoard()".
            self.sacked.clear();
            self.deaf = true;
        }
    }

    /// The latest timeout proved spurious (`tcp::spurious`): RecoveryPoint no
    /// longer holds back a new recovery (RFC 5682 §2.1 step 3b sets `recover`
    /// to SND.UNA).
    pub fn on_undo(&mut self) {
        self.recovery_point = None;
    }

    /// RFC 6675 §4 `NextSeg` during recovery: the next `(seq, len, rule)` to
    /// send, given HighACK, HighData and the end of the written data; rule (2)
    /// only when `may_send_new` (the peer window allows a new segment).
    pub fn next_seg(
        &mut self,
        high_ack: u64,
        high_data: u64,
        app_end: u64,
        may_send_new: bool,
    ) -> Option<(u64, u64, NextSegRule)> {
        let highest_sacked = self.sacked.last().map_or(high_ack, |r| r.1);
        let from = self.high_rxt.max(high_ack);
        let (s2, run_end) = self.hole_at(from);
        let len = |s: u64, end: u64| self.smss.min(end - s);
        if self.ns2 {
            // Sack1TcpAgent::send_much: scb_->GetNextRetran() (the next hole with
            // SACKed data above it), else "xmit_seqno = t_seqno_++".
            return if s2 < highest_sacked {
                Some((s2, len(s2, run_end.min(highest_sacked)), NextSegRule::Unsacked))
            } else if high_data < app_end && may_send_new {
                Some((high_data, self.smss.min(app_end - high_data), NextSegRule::New))
            } else {
                None
            };
        }
        // A retransmission RACK found lost again goes first, as Linux's
        // tcp_xmit_retransmit_queue resends every lost segment from the head.
        if let Some((s, e)) = self.rack_relost {
            let (s, run_end) = self.hole_at(s.max(high_ack));
            let end = run_end.min(e);
            if s < end {
                let len = len(s, end);
                self.rack_relost = (s + len < e).then_some((s + len, e));
                return Some((s, len, NextSegRule::Lost));
            }
            self.rack_relost = None;
        }
        // (1.a) S2 above HighRxt, (1.b) below the highest SACKed octet, (1.c)
        // IsLost; or what a timeout marked lost, which Linux resends whatever
        // was SACKed (tcp_xmit_retransmit_queue resends every segment marked lost).
        if (s2 < highest_sacked || s2 < self.timeout_lost) && self.is_lost(s2) {
            self.rxt_high_data.get_or_insert(high_data);
            return Some((s2, len(s2, run_end.min(highest_sacked.max(self.timeout_lost))), NextSegRule::Lost));
        }
        // (2) previously unsent data, if the receiver's window allows.
        if high_data < app_end && may_send_new {
            return Some((high_data, self.smss.min(app_end - high_data), NextSegRule::New));
        }
        if !self.forward {
            return None;
        }
        // (3) as (1) without (1.c).
        if s2 < highest_sacked {
            self.rxt_high_data.get_or_insert(high_data);
            return Some((s2, len(s2, run_end.min(highest_sacked)), NextSegRule::Unsacked));
        }
        // (4) one rescue retransmission per recovery, of the highest outstanding
        // unSACKed octet, "If HighACK is greater than RescueRxt".
        if self.rescue && self.rescue_rxt.map_or(true, |r| high_ack > r) {
            let top = self.highest_unsacked_below(high_ack, high_data)?;
            let start = top.saturating_sub(self.smss).max(self.hole_start(top, high_ack));
            self.rescue_rxt = self.recovery_point;
            return Some((start, top - start, NextSegRule::Rescue));
        }
        None
    }

    /// One past the highest unSACKed octet in `[high_ack, high_data)`, if any.
    fn highest_unsacked_below(&self, high_ack: u64, high_data: u64) -> Option<u64> {
        let mut top = high_data;
        for &(s, e) in self.sacked.iter().rev() {
            if e < top {
                break;
            }
            top = top.min(s);
        }
        (top > high_ack).then_some(top)
    }

    /// Start of the unSACKed run that ends at `top` (not below `high_ack`).
    fn hole_start(&self, top: u64, high_ack: u64) -> u64 {
        let i = self.sacked.partition_point(|&(_, e)| e < top);
        (if i == 0 { high_ack } else { self.sacked[i - 1].1 }).max(high_ack)
    }

    /// The sender put a segment ending at `end` on the wire by `rule` (§5
    /// step C.2): a retransmission moves HighRxt, "unless NextSeg () rule (4)
    /// was invoked"; new data moves HighData only (the sender's SND.MAX).
    pub fn on_sent(&mut self, end: u64, rule: NextSegRule) {
        if matches!(rule, NextSegRule::Lost | NextSegRule::Unsacked) {
            self.high_rxt = self.high_rxt.max(end);
        }
        // Sack1TcpAgent::send_much: "pipe_++".
        self.ns2_pipe += self.smss as i64;
    }
}

#[cfg(test)]
mod tests;
