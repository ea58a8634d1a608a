//! Socket knobs shared by the client and the server.
//!
//! Each knob is one socket option, set on every connection before it carries
//! data (the buffer sizes before `connect`, so that the window scale the
//! handshake negotiates can use them). Knobs left at `None` keep the kernel's
//! defaults (`net.ipv4.tcp_rmem`, `tcp_wmem`, `tcp_congestion_control`).

use crate::config::{invalid, ConfigError};
use serde::{Deserialize, Serialize};
use socket2::{Domain, Socket, Type};
use std::io;

/// Socket options of every connection of one side.
///
/// Default values: `nodelay` on, `quickack` off (the kernel's delayed ACKs),
/// no congestion control, receive or send buffer override.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SocketOptions {
    /// `TCP_NODELAY`: send small segments at once (no Nagle, RFC 896). On by
    /// default: with Nagle a response's short last segment waits for the ACK
    /// of the data before it, which the receiver may delay.
    pub nodelay: bool,
    /// `TCP_QUICKACK`, re-armed after every receive: the receiver ACKs every
    /// segment at once instead of delaying ACKs (RFC 1122 4.2.3.2). Linux
    /// clears the flag by itself, hence the re-arming.
    pub quickack: bool,
    /// `TCP_CONGESTION`: congestion control by its kernel name (`cubic`, `reno`, `bbr`, ...).
    pub congestion: Option<String>,
    /// `SO_RCVBUF` in bytes (the kernel doubles it for its bookkeeping).
    pub rcvbuf: Option<usize>,
    /// `SO_SNDBUF` in bytes (the kernel doubles it for its bookkeeping).
    pub sndbuf: Option<usize>,
}

impl Default for SocketOptions {
    fn default() -> Self {
        SocketOptions { nodelay: true, quickack: false, congestion: None, rcvbuf: None, sndbuf: None }
    }
}

impl SocketOptions {
    /// Check the knobs before any connection: buffer sizes in range, and a
    /// congestion control this kernel has (set on a throwaway socket).
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (field, size) in [("rcvbuf", self.rcvbuf), ("sndbuf", self.sndbuf)] {
            if matches!(size, Some(s) if s == 0 || s > i32::MAX as usize) {
                return Err(invalid(field, "must be between 1 byte and 2 GiB - 1"));
            }
        }
        if let Some(name) = &self.congestion {
            let trial = Socket::new(Domain::IPV4, Type::STREAM, None)
                .and_then(|socket| socket.set_tcp_congestion(name.as_bytes()));
            if let Err(e) = trial {
                let offered = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
                    .map(|list| format!("; this kernel offers {}", list.trim()))
                    .unwrap_or_default();
                return Err(invalid("congestion", format!("{name:?} cannot be set ({e}){offered}")));
            }
        }
        Ok(())
    }

    /// Set every knob on `socket`; an error names the option the kernel refused.
    pub fn apply(&self, socket: &Socket) -> io::Result<()> {
        let named = |option: &str, result: io::Result<()>| {
            result.map_err(|e| io::Error::new(e.kind(), format!("{option}: {e}")))
        };
        named("TCP_NODELAY", socket.set_tcp_nodelay(self.nodelay))?;
        if let Some(size) = self.rcvbuf {
            named("SO_RCVBUF", socket.set_recv_buffer_size(size))?;
        }
        if let Some(size) = self.sndbuf {
            named("SO_SNDBUF", socket.set_send_buffer_size(size))?;
        }
        if let Some(name) = &self.congestion {
            named(&format!("TCP_CONGESTION {name:?}"), socket.set_tcp_congestion(name.as_bytes()))?;
        }
        self.rearm_quickack(socket)
    }

    /// Re-arm `TCP_QUICKACK` when the knob is on (call after every receive).
    pub fn rearm_quickack(&self, socket: &Socket) -> io::Result<()> {
        if self.quickack {
            socket.set_tcp_quickack(true)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use socket2::Protocol;

    fn tcp_socket() -> Socket {
        Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP)).unwrap()
    }

    #[test]
    fn apply_sets_every_knob() {
        let socket = tcp_socket();
        let options = SocketOptions {
            nodelay: true,
            quickack: true,
            congestion: Some("reno".into()),
            rcvbuf: Some(64 << 10),
            sndbuf: Some(32 << 10),
        };
        options.apply(&socket).unwrap();
        assert!(socket.tcp_nodelay().unwrap());
        assert!(socket.tcp_quickack().unwrap());
        assert!(socket.tcp_congestion().unwrap().starts_with(b"reno\0"));
        // socket(7): the kernel doubles the value (sizes this small are under any rmem_max / wmem_max).
        assert_eq!(socket.recv_buffer_size().unwrap(), 2 * (64 << 10));
        assert_eq!(socket.send_buffer_size().unwrap(), 2 * (32 << 10));
    }

    #[test]
    fn validate_names_an_unknown_congestion_control_and_lists_the_available_ones() {
        let options = SocketOptions { congestion: Some("no-such-cc".into()), ..SocketOptions::default() };
        let err = options.validate().unwrap_err().to_string();
        assert!(err.starts_with("congestion: \"no-such-cc\" cannot be set ("), "{err}");
        assert!(err.contains("this kernel offers ") && err.contains("reno"), "{err}");
        let reno = SocketOptions { congestion: Some("reno".into()), ..SocketOptions::default() };
        assert_eq!(reno.validate(), Ok(()));
    }

    #[test]
    fn an_unknown_congestion_control_is_named_in_the_error() {
        let options = SocketOptions { congestion: Some("no-such-cc".into()), ..SocketOptions::default() };
        let err = options.apply(&tcp_socket()).unwrap_err();
        assert!(err.to_string().starts_with("TCP_CONGESTION \"no-such-cc\": "), "{err}");
    }
}
