//! Applications that drive the TCP connections.

pub mod background;
mod sync_read;

pub use sync_read::{BlockDone, Progress, Release, Response, SyncRead};
