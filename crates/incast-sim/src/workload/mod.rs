//! Applications that drive the TCP connections.

pub mod background;
pub mod clients;
pub mod flow_sizes;
pub mod ideal;
mod sync_read;
pub mod traffic;

pub use sync_read::{
    BlockDone, Progress, Release, RequestOrder, RequestPath, Response, ResponseSize, SyncRead, SyncReadConfig,
    WorkloadKind,
};
