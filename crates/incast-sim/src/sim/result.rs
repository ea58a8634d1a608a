//! The run's figures, gathered from the engine's parts when it stops.
//!
//! **Models:** goodput counts the response bytes delivered to the client
//! applications over the simulated time until the stop; the best goodput
//! is the line rate times the payload share of a full frame, per client.
//! Flows come in (client, server) endpoint pairs, the reading connections
//! first, then the background flows'. The bottleneck whose peak the
//! summary reports is the switch port toward client 0.
//! **Deliberately different:** see `stats`.
//! **Not modelled:** see `stats`.

use super::Sim;
use crate::stats::fct::TrafficFigures;
use crate::stats::{FlowStats, GipTimeoutClasses, Percentiles, RunResult, Summary, TimeoutClasses};
use crate::tcp::Endpoint;
use crate::time::SimTime;

impl<const EXTRAS: bool, const PACED: bool> Sim<EXTRAS, PACED> {
    /// The run's result, its figures taken at the stop.
    pub(super) fn finish(mut self) -> RunResult {
        let end = self.stopped_at.unwrap_or(self.now);
        let elapsed = end.since(SimTime::ZERO);
        let mbps = |bytes: u64| if elapsed.is_zero() { 0.0 } else { bytes as f64 * 8.0 / elapsed.as_secs_f64() / 1e6 };
        // Endpoints come in (client, server) pairs, one pair per connection;
        // the reading connections first, then the background flows'.
        let conns = self.reads.conns as usize;
        let (reading_and_background, _) = self.hosts.eps.split_at(2 * self.traffic.base as usize);
        let (servers, background) = reading_and_background.split_at(2 * conns);
        let pairs = || servers.chunks_exact(2).map(|p| (&p[0], &p[1]));
        let sum = |f: &dyn Fn(&Endpoint<EXTRAS, PACED>) -> u64| servers.iter().map(f).sum::<u64>();
        let bytes_delivered: u64 = pairs().map(|(c, _)| c.delivered()).sum();
        let bytes_received: u64 = pairs().map(|(c, _)| c.stats().bytes_received).sum();
        let best = self.best_goodput_mbps;
        let goodput = mbps(bytes_delivered);
        let times: Vec<f64> = self.reads.blocks.iter().map(|b| b.time_ms).collect();
        let net = &mut self.net;
        let bottleneck = net.net.port(net.bottleneck).queue.stats();
        let queue_log = net.net.port_mut(net.bottleneck).queue.take_occupancy_log();
        let traces = self.record.tr.take().map(|tr| tr.finish(end, queue_log)).unwrap_or_default();
        let mut timeout_classes = TimeoutClasses::default();
        let mut gip_timeout_classes = GipTimeoutClasses::default();
        for e in servers {
            timeout_classes.merge(&e.stats().timeout_classes);
            gip_timeout_classes.merge(&e.stats().gip_timeout_classes);
        }
        let (reads, flow_drops) = (self.reads.layout, &self.net.flow_drops);
        let row = |i: usize, c: &Endpoint<EXTRAS, PACED>, s: &Endpoint<EXTRAS, PACED>| FlowStats {
            flow: i as u32,
            client: (i < conns).then(|| reads.client_of(i as u32)),
            server: (i < conns).then(|| reads.server_of(i as u32)),
            bytes_delivered: c.delivered(),
            bytes_sent: s.stats().bytes_sent,
            data_packets_sent: s.stats().data_segments_sent,
            retransmitted_packets: s.stats().retransmitted_segments + c.stats().retransmitted_segments,
            timeouts: s.stats().timeouts + c.stats().timeouts,
            fast_retransmits: s.stats().fast_retransmits + c.stats().fast_retransmits,
            max_cwnd_bytes: s.stats().max_cwnd,
            drops: flow_drops[i],
        };
        let flows: Vec<FlowStats> = pairs().enumerate().map(|(i, (c, s))| row(i, c, s)).collect();
        let clients = self.reads.client_stats(&flows, &mbps);
        let background: Vec<FlowStats> =
            background.chunks_exact(2).enumerate().map(|(i, p)| row(conns + i, &p[0], &p[1])).collect();
        let tallies = self.reads.block_tallies;
        let [server_srtt_ms, server_rttvar_ms, server_rto_ms] = self.reads.request_rtt.means_ms();
        let ([unluckiest, unluckiest_floss, unluckiest_lack], timed_out_block_fraction) =
            tallies.per_block(self.reads.blocks.len() as u64);
        let summary = Summary {
            goodput_mbps: goodput,
            client_goodput_mbps: clients.iter().map(|c| c.goodput_mbps).collect(),
            throughput_mbps: mbps(bytes_received),
            best_goodput_mbps: best,
            utilization: goodput / best,
            blocks: self.reads.blocks.len() as u64,
            sim_time_s: elapsed.as_secs_f64(),
            bytes_delivered,
            timeouts: sum(&|e| e.stats().timeouts),
            timeout_classes,
            gip_timeout_classes,
            spurious_timeouts: sum(&|e| e.stats().spurious_timeouts),
            undropped_timeouts: sum(&|e| e.stats().undropped_timeouts),
            lost_retransmit_dart_ge_thresh: tallies.lost_retransmit_dart[0],
            lost_retransmit_dart_lt_thresh: tallies.lost_retransmit_dart[1],
            unluckiest_flow_timeouts_per_block: unluckiest,
            unluckiest_flow_floss_per_block: unluckiest_floss,
            unluckiest_flow_lack_per_block: unluckiest_lack,
            timed_out_block_fraction,
            fast_retransmits: sum(&|e| e.stats().fast_retransmits),
            loss_probes: sum(&|e| e.stats().loss_probes),
            lost_retransmits: sum(&|e| e.stats().lost_retransmits),
            retransmitted_packets: sum(&|e| e.stats().retransmitted_segments),
            redundant_packets: sum(&|e| e.stats().redundant_segments),
            ecn_marks: self.net.marks,
            rude_drops: self.net.rude_drops,
            send_losses: self.hosts.send_losses,
            rude_polite_s: self.hosts.rude_polite_at.map(|t| t.as_secs_f64()),
            drops: self.net.dropped,
            block_time_ms: Percentiles::of(&times),
            server_srtt_ms,
            server_rttvar_ms,
            server_rto_ms,
            data_packets: sum(&|e| e.stats().data_segments_sent),
            packets_sent: self.net.sent,
            packets_delivered: self.net.delivered,
            packets_in_flight: self.net.pool.live() as u64 + self.net.ahead.unborn,
            queue_peak_bytes: bottleneck.peak_bytes,
            background_goodput_mbps: mbps(background.iter().map(|f| f.bytes_delivered).sum()),
            udp_goodput_mbps: mbps(self.udp.delivered),
            traffic: self.traffic.is_on().then(|| {
                let t = &self.traffic;
                TrafficFigures::of(&t.records, &t.queries_done, t.arrival_s(elapsed.as_secs_f64()), t.capacity_bps)
            }),
            events: self.processed(),
        };
        let eps = &self.hosts.eps;
        let (open_flows, queries, flow_paths) =
            self.traffic.take_rows(|flow| eps[super::endpoint_of(flow, crate::net::Direction::ToClient)].delivered());
        let ports = self.net.port_stats(end);
        let capture = self.record.capture.take().map(|c| *c);
        RunResult {
            summary,
            clients,
            flows,
            background,
            blocks: self.reads.blocks,
            timeouts: self.record.timeouts,
            ports,
            traces,
            open_flows,
            queries,
            flow_paths,
            capture,
        }
    }
}
