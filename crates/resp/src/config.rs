//! [`RespConfig`]: the decoder's limits and accepted syntax.
//!
//! Defaults follow redis-server: bulk strings up to 512 MiB (`proto-max-bulk-len`), inline
//! commands up to 64 KiB (`PROTO_INLINE_MAX_SIZE`), aggregates up to `i32::MAX` entries (its
//! multibulk limit). Redis accepts only flat commands; replies nest, so the depth limit is a
//! generous 64, which also bounds the recursion of dropping or encoding a decoded value.
//!
//! Memory: the decoder preallocates at most [`PREALLOCATED_ENTRIES`] entries per aggregate
//! whatever count it declares, and buffers a bulk payload only as its bytes arrive, so a
//! connection's memory grows with the bytes it actually sent, never with a declared length.

use crate::error::{invalid_config, ConfigError};

/// Redis's `proto-max-bulk-len` default: 512 MiB.
pub const DEFAULT_MAX_BULK_LENGTH: usize = 512 * 1024 * 1024;
/// Redis's multibulk limit: `i32::MAX` entries.
pub const DEFAULT_MAX_ARRAY_LENGTH: usize = i32::MAX as usize;
/// Default nesting limit: far deeper than any Redis reply.
pub const DEFAULT_MAX_NESTING_DEPTH: usize = 64;
/// Redis's `PROTO_INLINE_MAX_SIZE`: 64 KiB.
pub const DEFAULT_MAX_INLINE_LENGTH: usize = 64 * 1024;
/// Highest accepted `max_nesting_depth`: dropping, comparing and encoding a value recurse
/// once per level, so the depth stays far from any thread's stack size.
pub const MAX_NESTING_DEPTH_LIMIT: usize = 1024;
/// Smallest accepted `max_inline_length`: every length line must fit (`$` and 20 digits).
pub const MIN_INLINE_LENGTH: usize = 32;
/// Most entries reserved up front for one aggregate, whatever count it declares.
pub const PREALLOCATED_ENTRIES: usize = 1024;

/// Limits and syntax accepted by a [`RespDecoder`](crate::RespDecoder).
///
/// ```
/// use netloop_resp::RespConfig;
/// let config = RespConfig { max_bulk_length: 1 << 20, ..RespConfig::default() };
/// assert!(config.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RespConfig {
    /// Longest bulk string, bulk error or verbatim string payload, in bytes.
    pub max_bulk_length: usize,
    /// Most entries one aggregate may declare (elements; pairs for maps and attributes).
    pub max_array_length: usize,
    /// Most aggregates nested inside one another (a command needs 1; 0 allows only
    /// scalars). Attributes count as a level.
    pub max_nesting_depth: usize,
    /// Longest inline command line and longest type line (`+`, `-`, `:`, `,`, `(`, and the
    /// length lines), CRLF excluded.
    pub max_inline_length: usize,
    /// Decode a top-level line that does not start with a type byte as an inline command
    /// (`PING\r\n` → `["PING"]`), as redis-server does. Off: it is `ERR_RESP_BAD_TYPE`.
    pub inline_commands: bool,
    /// Accept the RESP3 types. Off: their type bytes are `ERR_RESP_BAD_TYPE` (or start an
    /// inline command at top level when those are on).
    pub resp3: bool,
}

impl Default for RespConfig {
    fn default() -> Self {
        RespConfig {
            max_bulk_length: DEFAULT_MAX_BULK_LENGTH,
            max_array_length: DEFAULT_MAX_ARRAY_LENGTH,
            max_nesting_depth: DEFAULT_MAX_NESTING_DEPTH,
            max_inline_length: DEFAULT_MAX_INLINE_LENGTH,
            inline_commands: true,
            resp3: true,
        }
    }
}

impl RespConfig {
    /// Checks every field.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the first field out of range: `max_nesting_depth` above
    /// [`MAX_NESTING_DEPTH_LIMIT`] or `max_inline_length` below [`MIN_INLINE_LENGTH`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.max_nesting_depth > MAX_NESTING_DEPTH_LIMIT {
            return Err(invalid_config(format!(
                "maxNestingDepth must be at most {MAX_NESTING_DEPTH_LIMIT} (got {})",
                self.max_nesting_depth
            )));
        }
        if self.max_inline_length < MIN_INLINE_LENGTH {
            return Err(invalid_config(format!(
                "maxInlineLength must be at least {MIN_INLINE_LENGTH} (got {})",
                self.max_inline_length
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_redis_limits_and_valid() {
        let config = RespConfig::default();
        assert_eq!(config.max_bulk_length, 536_870_912);
        assert_eq!(config.max_inline_length, 65_536);
        assert_eq!(config.max_array_length, 2_147_483_647);
        assert!(config.validate().is_ok());
    }

    #[test]
    fn out_of_range_fields_are_config_errors_naming_the_field() {
        let deep = RespConfig {
            max_nesting_depth: MAX_NESTING_DEPTH_LIMIT + 1,
            ..RespConfig::default()
        };
        let error = deep.validate().unwrap_err();
        assert!(error.reason.contains("maxNestingDepth"), "{error}");
        let short = RespConfig {
            max_inline_length: MIN_INLINE_LENGTH - 1,
            ..RespConfig::default()
        };
        let error = short.validate().unwrap_err();
        assert!(error.reason.contains("maxInlineLength"), "{error}");
        assert_eq!(error.code(), "ERR_INVALID_ARG_VALUE");
    }
}
