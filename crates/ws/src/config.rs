//! [`WsConfig`]: the limits and behaviour of one WebSocket connection.

use std::time::Duration;

use crate::decoder::Role;
use crate::error::ConfigError;
use crate::extension::DeflateConfig;

/// Default `max_frame_size`: 16 MiB.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 16 << 20;
/// Default `max_message_size`: 64 MiB.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 << 20;
/// Default `close_timeout`: 10 s (Netty's `forceCloseTimeoutMillis`).
pub const DEFAULT_CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// How a connection decodes, answers and closes.
#[derive(Debug, Clone)]
pub struct WsConfig {
    /// Which end this is (server: reads masked frames, writes unmasked).
    pub role: Role,
    /// Longest frame payload accepted (1009 beyond), checked from the header.
    pub max_frame_size: usize,
    /// Longest message accepted, all fragments together (1009 beyond).
    pub max_message_size: usize,
    /// Whole messages (`true`) or each fragment as it comes (`false`, streaming mode).
    pub aggregate: bool,
    /// Answer each ping with a pong carrying its payload, natively.
    pub auto_pong: bool,
    /// Also pass ping and pong frames on to the application.
    pub forward_control_frames: bool,
    /// How long to wait for the peer's close frame after sending ours, then close anyway.
    pub close_timeout: Duration,
    /// While the channel is not writable, decode no new frame and stop reading (servers;
    /// see handler/pause.rs). Default: on for servers, off for clients.
    pub pause_while_unwritable: bool,
    /// permessage-deflate (RFC 7692): `Some` to accept (server) or offer (client) it with
    /// these settings; `None` (default) never compresses. Used by the handshake; the handler
    /// compresses only with the parameters agreed
    /// ([`WebSocketHandler::with_deflate`](crate::WebSocketHandler::with_deflate)).
    pub permessage_deflate: Option<DeflateConfig>,
}

impl Default for WsConfig {
    fn default() -> Self {
        WsConfig {
            role: Role::Server,
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            aggregate: true,
            auto_pong: true,
            forward_control_frames: false,
            close_timeout: DEFAULT_CLOSE_TIMEOUT,
            pause_while_unwritable: true,
            permessage_deflate: None,
        }
    }
}

impl WsConfig {
    /// Checks the values.
    ///
    /// # Errors
    /// [`ConfigError`] naming the first field out of range: sizes must be at least 125 bytes
    /// (a control frame) and `max_frame_size` at most `max_message_size`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let fail = |reason: &str| Err(ConfigError::new("WebSocket", reason));
        if self.max_frame_size < 125 {
            return fail("maxFrameSize must be at least 125 bytes");
        }
        if self.max_message_size < self.max_frame_size {
            return fail("maxMessageSize must be at least maxFrameSize");
        }
        if self.close_timeout.is_zero() {
            return fail("closeTimeout must be positive");
        }
        if let Some(deflate) = &self.permessage_deflate {
            deflate
                .validate()
                .map_err(|reason| ConfigError::new("WebSocket", reason))?;
        }
        if self.pause_while_unwritable && self.role == Role::Client {
            return fail(
                "pauseWhileUnwritable is for servers (a client would stop reading replies)",
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_config_is_transports_config_error_with_the_websocket_subject() {
        let config = WsConfig {
            max_frame_size: 100,
            ..WsConfig::default()
        };
        let error: netloop_transport::ConfigError = config.validate().unwrap_err();
        assert_eq!(error.subject, "WebSocket");
        assert_eq!(
            error.to_string(),
            "invalid WebSocket configuration: maxFrameSize must be at least 125 bytes"
        );
        assert_eq!(error.code(), "ERR_INVALID_ARG_VALUE");
    }
}
