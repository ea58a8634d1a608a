//! Result tables as typed columns: each column one buffer of little-endian
//! values of one type, named as numpy names it (`<f8`, `<u4`, ...), or one
//! byte per row coding a label. A consumer builds an array per column
//! without reading a row at a time: the tables that grow with simulated time
//! (the timeout rows, hundreds of thousands of them, and the traces, up to
//! ten million goodput bins) cross to Python this way instead of as JSON.

use super::trace::Traces;
use super::TimeoutRecord;
use crate::stats::{GipClass, Side, TimeoutClass};
use serde::Serialize;

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// The column's name, as in the row's JSON form.
    pub name: &'static str,
    /// numpy's name for the type of each value: `<f8`, `<u4`, `<u8`, `<i8`,
    /// `|b1`, or `|u1` (or `<i8`, -1 for none) for a code into `labels`.
    pub dtype: &'static str,
    /// For a coded column, the label of each code; empty otherwise.
    pub labels: Vec<String>,
    /// The values, little-endian, one after another.
    pub data: Vec<u8>,
}

impl Column {
    pub(crate) fn of<T, const N: usize>(
        name: &'static str,
        dtype: &'static str,
        values: impl ExactSizeIterator<Item = T>,
        bytes: impl Fn(T) -> [u8; N],
    ) -> Self {
        let mut data = Vec::with_capacity(values.len() * N);
        for v in values {
            data.extend_from_slice(&bytes(v));
        }
        Column { name, dtype, labels: Vec::new(), data }
    }

    /// A `<f8` column of `values`.
    pub(crate) fn f64s(name: &'static str, values: impl ExactSizeIterator<Item = f64>) -> Self {
        Column::of(name, "<f8", values, f64::to_le_bytes)
    }

    /// A `<u8` column of `values`.
    pub(crate) fn u64s(name: &'static str, values: impl ExactSizeIterator<Item = u64>) -> Self {
        Column::of(name, "<u8", values, u64::to_le_bytes)
    }

    /// A `<u4` column of `values`.
    pub(crate) fn u32s(name: &'static str, values: impl ExactSizeIterator<Item = u32>) -> Self {
        Column::of(name, "<u4", values, u32::to_le_bytes)
    }

    /// A `<i8` column of `values`.
    pub(crate) fn i64s(name: &'static str, values: impl ExactSizeIterator<Item = i64>) -> Self {
        Column::of(name, "<i8", values, i64::to_le_bytes)
    }

    /// A `<i8` column of codes into `labels`, -1 for a row without one.
    pub(crate) fn labelled(name: &'static str, labels: &[String], codes: impl ExactSizeIterator<Item = i64>) -> Self {
        Column { labels: labels.to_vec(), ..Column::i64s(name, codes) }
    }

    /// A `|b1` column of `values`.
    pub(crate) fn bools(name: &'static str, values: impl ExactSizeIterator<Item = bool>) -> Self {
        Column::of(name, "|b1", values, |b| [u8::from(b)])
    }

    /// A label column: each row's variant as its index in `variants`, which
    /// are labelled as the row's JSON form names them.
    fn coded<T: Copy + PartialEq + Serialize>(
        name: &'static str,
        variants: &[T],
        rows: &[TimeoutRecord],
        value: impl Fn(&TimeoutRecord) -> T,
    ) -> Self {
        let labels = variants
            .iter()
            .map(|v| serde_json::to_value(v).ok().and_then(|j| j.as_str().map(str::to_owned)).expect("a unit variant"))
            .collect();
        let data = rows
            .iter()
            .map(|r| variants.iter().position(|v| *v == value(r)).expect("every variant is listed") as u8)
            .collect();
        Column { name, dtype: "|u1", labels, data }
    }
}

/// The timeout rows as columns, in the order of [`TimeoutRecord`]'s fields.
/// `client` is `-1` for a background flow's timeout (no client).
pub fn timeouts(rows: &[TimeoutRecord]) -> Vec<Column> {
    vec![
        Column::f64s("time_s", rows.iter().map(|r| r.time_s)),
        Column::u32s("flow", rows.iter().map(|r| r.flow)),
        Column::of("client", "<i8", rows.iter().map(|r| r.client.map_or(-1, i64::from)), i64::to_le_bytes),
        Column::coded("side", &[Side::Server, Side::Client], rows, |r| r.side),
        Column::u64s("block", rows.iter().map(|r| r.block)),
        Column::f64s("rto_us", rows.iter().map(|r| r.rto_us)),
        Column::u32s("backoff", rows.iter().map(|r| r.backoff)),
        Column::u64s("cwnd_bytes", rows.iter().map(|r| r.cwnd_bytes)),
        Column::u64s("flight_bytes", rows.iter().map(|r| r.flight_bytes)),
        Column::u32s("dart", rows.iter().map(|r| r.dart)),
        Column::coded(
            "class",
            &[
                TimeoutClass::FullWindowLoss,
                TimeoutClass::LastPacketLoss,
                TimeoutClass::LostRetransmit,
                TimeoutClass::Other,
            ],
            rows,
            |r| r.class,
        ),
        Column::coded("gip_class", &[GipClass::Floss, GipClass::Lack, GipClass::Other], rows, |r| r.gip_class),
        Column::bools("spurious", rows.iter().map(|r| r.spurious)),
    ]
}

/// Each trace that was on, by name (`goodput`, `queue`, `flows`, `bbr`,
/// `block_cwnd`), as columns in the order of its fields (BBR's `mode`
/// coded over its four names); each trace's
/// vectors are dropped as soon as they are encoded. A missing
/// `ssthresh_bytes` (still unset) is `-1`, a missing `srtt_us` NaN.
pub fn traces(t: Traces) -> Vec<(&'static str, Vec<Column>)> {
    let mut out = Vec::new();
    if let Some(g) = t.goodput {
        let time = Column::f64s("time_s", g.time_s.into_iter());
        out.push(("goodput", vec![time, Column::f64s("goodput_mbps", g.goodput_mbps.into_iter())]));
    }
    if let Some(q) = t.queue {
        let time = Column::f64s("time_s", q.time_s.into_iter());
        let bytes = Column::u64s("queue_bytes", q.queue_bytes.into_iter());
        out.push(("queue", vec![time, bytes, Column::bools("dropped", q.dropped.into_iter())]));
    }
    if let Some(f) = t.flows {
        let ssthresh = f.ssthresh_bytes.into_iter().map(|s| s.map_or(-1, |b| b as i64));
        out.push((
            "flows",
            vec![
                Column::f64s("time_s", f.time_s.into_iter()),
                Column::u32s("flow", f.flow.into_iter()),
                Column::u64s("cwnd_bytes", f.cwnd_bytes.into_iter()),
                Column::of("ssthresh_bytes", "<i8", ssthresh, i64::to_le_bytes),
                Column::f64s("rto_us", f.rto_us.into_iter()),
                Column::f64s("srtt_us", f.srtt_us.into_iter().map(|s| s.unwrap_or(f64::NAN))),
            ],
        ));
    }
    if let Some(b) = t.bbr {
        let labels = ["startup", "drain", "probe_bw", "probe_rtt"];
        let codes = b.mode.iter().map(|m| labels.iter().position(|l| l == m).expect("a BBR mode") as u8).collect();
        out.push((
            "bbr",
            vec![
                Column::f64s("time_s", b.time_s.into_iter()),
                Column::u32s("flow", b.flow.into_iter()),
                Column { name: "mode", dtype: "|u1", labels: labels.map(str::to_owned).to_vec(), data: codes },
                Column::f64s("bw_bps", b.bw_bps.into_iter()),
                Column::f64s("min_rtt_s", b.min_rtt_s.into_iter()),
                Column::f64s("pacing_gain", b.pacing_gain.into_iter()),
                Column::f64s("cwnd_gain", b.cwnd_gain.into_iter()),
                Column::f64s("pacing_rate_bps", b.pacing_rate_bps.into_iter()),
                Column::f64s("delivery_rate_bps", b.delivery_rate_bps.into_iter()),
                Column::u64s("cwnd_pkts", b.cwnd_pkts.into_iter()),
            ],
        ));
    }
    if let Some(b) = t.block_cwnd {
        let block = Column::u64s("block", b.block.into_iter());
        let flow = Column::u32s("flow", b.flow.into_iter());
        out.push(("block_cwnd", vec![block, flow, Column::u64s("cwnd_bytes", b.cwnd_bytes.into_iter())]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(flow: u32, client: Option<u32>, class: TimeoutClass) -> TimeoutRecord {
        TimeoutRecord {
            time_s: 0.25,
            flow,
            client,
            side: Side::Client,
            block: 7,
            rto_us: 200.0,
            backoff: 2,
            cwnd_bytes: 1460,
            flight_bytes: 2920,
            dart: 3,
            class,
            gip_class: GipClass::Lack,
            spurious: true,
        }
    }

    /// Every field of the row's JSON form is a column, in order, and each
    /// column holds exactly the rows' values.
    #[test]
    fn columns_hold_the_rows_values_in_the_json_forms_order() {
        let rows = [row(1, Some(0), TimeoutClass::LostRetransmit), row(9, None, TimeoutClass::FullWindowLoss)];
        let cols = timeouts(&rows);
        let json = serde_json::to_value(&rows[0]).unwrap();
        let names: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(cols.iter().map(|c| c.name).collect::<Vec<_>>(), names);
        let col = |n: &str| cols.iter().find(|c| c.name == n).unwrap();
        assert_eq!(col("flow").data, [1, 0, 0, 0, 9, 0, 0, 0]);
        assert_eq!(col("client").data[8..], (-1i64).to_le_bytes());
        assert_eq!(col("time_s").data[..8], 0.25f64.to_le_bytes());
        let class = col("class");
        assert_eq!(class.labels, ["full_window_loss", "last_packet_loss", "lost_retransmit", "other"]);
        assert_eq!(class.data, [2, 0]);
        assert_eq!((col("side").labels[col("side").data[0] as usize].as_str(), col("spurious").data[1]), ("client", 1));
        for c in &cols {
            let width = c.dtype[2..].parse::<usize>().unwrap_or(1);
            assert_eq!(c.data.len(), rows.len() * width, "{}", c.name);
        }
    }

    /// Each trace's columns are its fields in the JSON form's order, a trace
    /// that was off has none, and an unset ssthresh and a missing SRTT are
    /// coded as -1 and NaN.
    #[test]
    fn traces_cross_as_their_fields_with_missing_values_coded() {
        use crate::stats::trace::{FlowTrace, QueueTrace};
        let flows = FlowTrace {
            time_s: vec![0.5, 1.0],
            flow: vec![3, 4],
            cwnd_bytes: vec![2920, 1460],
            ssthresh_bytes: vec![None, Some(4380)],
            rto_us: vec![200.0, 400.0],
            srtt_us: vec![None, Some(100.0)],
        };
        let queue = QueueTrace { time_s: vec![0.25], queue_bytes: vec![1518], dropped: vec![true] };
        let out = traces(Traces { queue: Some(queue.clone()), flows: Some(flows.clone()), ..Traces::default() });
        assert_eq!(out.iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["queue", "flows"]);
        for ((_, cols), json) in out.iter().zip([serde_json::to_value(&queue), serde_json::to_value(&flows)]) {
            let json = json.unwrap();
            let names: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(cols.iter().map(|c| c.name).collect::<Vec<_>>(), names);
        }
        let col = |n: &str| out[1].1.iter().find(|c| c.name == n).unwrap();
        assert_eq!(col("ssthresh_bytes").data[..8], (-1i64).to_le_bytes());
        assert_eq!(col("ssthresh_bytes").data[8..], 4380i64.to_le_bytes());
        assert!(f64::from_le_bytes(col("srtt_us").data[..8].try_into().unwrap()).is_nan());
        assert_eq!(col("flow").data, [3, 0, 0, 0, 4, 0, 0, 0]);
        assert_eq!(out[0].1[2].data, [1]);
    }
}
