//! Applications that drive the TCP connections.

mod sync_read;

pub use sync_read::{BlockDone, Progress, Release, Response, SyncRead};
