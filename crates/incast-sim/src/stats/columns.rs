//! Result tables as typed columns: each column one buffer of little-endian
//! values of one type, named as numpy names it (`<f8`, `<u4`, ...), or one
//! byte per row coding a label. A consumer builds an array per column
//! without reading a row at a time: the timeout table, the one that grows
//! with simulated time (hundreds of thousands of rows), crosses to Python
//! this way instead of as JSON objects.

use super::TimeoutRecord;
use crate::stats::{GipClass, Side, TimeoutClass};
use serde::Serialize;

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// The column's name, as in the row's JSON form.
    pub name: &'static str,
    /// numpy's name for the type of each value: `<f8`, `<u4`, `<u8`, `<i8`,
    /// `|b1`, or `|u1` for a code into `labels`.
    pub dtype: &'static str,
    /// For a coded column, the label of each code; empty otherwise.
    pub labels: Vec<String>,
    /// The values, little-endian, one after another.
    pub data: Vec<u8>,
}

impl Column {
    fn of<T, const N: usize>(
        name: &'static str,
        dtype: &'static str,
        rows: &[TimeoutRecord],
        value: impl Fn(&TimeoutRecord) -> T,
        bytes: impl Fn(T) -> [u8; N],
    ) -> Self {
        let mut data = Vec::with_capacity(rows.len() * N);
        for r in rows {
            data.extend_from_slice(&bytes(value(r)));
        }
        Column { name, dtype, labels: Vec::new(), data }
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
        Column::of("time_s", "<f8", rows, |r| r.time_s, f64::to_le_bytes),
        Column::of("flow", "<u4", rows, |r| r.flow, u32::to_le_bytes),
        Column::of("client", "<i8", rows, |r| r.client.map_or(-1, i64::from), i64::to_le_bytes),
        Column::coded("side", &[Side::Server, Side::Client], rows, |r| r.side),
        Column::of("block", "<u8", rows, |r| r.block, u64::to_le_bytes),
        Column::of("rto_us", "<f8", rows, |r| r.rto_us, f64::to_le_bytes),
        Column::of("backoff", "<u4", rows, |r| r.backoff, u32::to_le_bytes),
        Column::of("cwnd_bytes", "<u8", rows, |r| r.cwnd_bytes, u64::to_le_bytes),
        Column::of("flight_bytes", "<u8", rows, |r| r.flight_bytes, u64::to_le_bytes),
        Column::of("dart", "<u4", rows, |r| r.dart, u32::to_le_bytes),
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
        Column::of("spurious", "|b1", rows, |r| r.spurious, |b| [u8::from(b)]),
    ]
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
}
