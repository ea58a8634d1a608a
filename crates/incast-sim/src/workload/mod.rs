//! Applications that drive the TCP connections.

pub mod background;
pub mod clients;
mod sync_read;

pub use sync_read::{
    BlockDone, Progress, Release, RequestOrder, Response, ResponseSize, SyncRead, SyncReadConfig, WorkloadKind,
};
