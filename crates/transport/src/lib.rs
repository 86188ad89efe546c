//! Netty's channels and pipeline on netloop event loops: TCP server and client channels, the
//! handler pipeline with head and tail contexts, the outbound buffer with water marks,
//! adaptive receive sizing, bootstraps, and an embedded channel for deterministic tests.
//!
//! Threading: a channel, its pipeline and its handlers live on one loop thread (`!Send`).
//! Other threads reach a channel through a [`ChannelHandle`] (every call becomes a loop task).
//!
//! Handlers implement [`ChannelHandler`]: one trait for inbound events and outbound
//! operations, every method defaulting to pass-through. Messages are [`Message`]s (bytes or
//! any user value); errors are [`TransportError`]s with stable codes.

#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

mod accept_error;
mod acceptor;
mod bootstrap;
mod channel;
pub mod chunk;
mod config_error;
mod connection_limit;
mod context;
mod cumulation;
mod embedded;
mod error;
mod file_region;
mod handle;
mod handler;
mod handler_name;
mod initializer;
mod message;
mod options;
mod outbound_buffer;
mod pipeline;
mod promise;
mod read_pause;
mod recv_allocator;
mod server_channel;
mod socket_channel;
mod sys;
mod thread_context;

pub use acceptor::{AcceptedChildren, LoopChildren, ServerBootstrapAcceptor};
pub use bootstrap::{Bootstrap, LoopChooser, ServerBootstrap, ACCEPTOR_NAME};
pub use channel::{Channel, ChannelId, WrittenNow};
pub use config_error::ConfigError;
pub use connection_limit::ConnectionPermit;
pub use context::ChannelHandlerContext;
pub use cumulation::append_to_cumulation;
pub use embedded::{EmbeddedChannel, ReadCounter};
pub use error::{HandlerResult, TransportError};
pub use file_region::FileRegion;
pub use handle::ChannelHandle;
pub use handler::ChannelHandler;
pub use initializer::{ChannelInitializer, InitFn};
pub use message::{Message, UserEvent};
pub use options::{ChannelOption, ChannelOptions, WaterMark};
pub use outbound_buffer::{OutboundBuffer, WritabilityChange, ENTRY_OVERHEAD};
pub use pipeline::{ChannelPipeline, IntoHandler, Unhandled, UnhandledSink};
pub use promise::{pending_local_listeners, ChannelFuture, ChannelPromise, LocalListenerExt};
pub use read_pause::{ReadPause, Refired, REFIRE_LIMIT};
pub use recv_allocator::{AdaptiveRecvAllocator, RecvSizing};
pub use server_channel::{AcceptedSocket, ServerSocketChannel};
pub use socket_channel::{ChannelInputShutdown, SocketChannel};

pub use bytes::{Bytes, BytesMut};

pub use netloop_eventloop as eventloop;
