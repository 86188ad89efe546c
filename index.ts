/// <reference types="node" preserve="true" />
/**
 * netloop: Netty's event-loop system for Node.js.
 *
 * The front door: the API lives in `src/`, one module per concept.
 */
export { NetloopError } from './src/errors'
export { EventLoop, ScheduledTask, type EventLoopOptions, type EventLoopState, type LoopMetrics, type LoopUtilization } from './src/loop'
export { type TaskListener } from './src/timers'
export { EventLoopGroup } from './src/group'
export { Channel, type ChannelConfig } from './src/channel'
export { ChannelPipeline, type UnhandledExceptionHandler, type HandlerClass, type HandlerRef } from './src/pipeline'
export { ChannelHandlerContext } from './src/context'
export { ChannelPromise } from './src/promise'
export { ServerBootstrap, Bootstrap, type ChannelInitializer } from './src/bootstrap'
export {
  type ChannelHandler,
  type ChannelInboundHandler,
  type ChannelOutboundHandler,
  type Outbound,
  type IdleState,
  IdleStateEvent,
  ChannelInputShutdownEvent,
} from './src/handlers'
export {
  NativeHandler,
  LineBasedFrameDecoder,
  DelimiterBasedFrameDecoder,
  FixedLengthFrameDecoder,
  LengthFieldBasedFrameDecoder,
  LengthFieldPrepender,
  IdleStateHandler,
  FlushConsolidationHandler,
  type LengthFieldOptions,
} from './src/codecs'
export { type ChannelOptions, type ChannelOptionName } from './src/options'
export { type ChannelMetrics } from './src/hub'
export { type ServerChannel } from './src/channel'
export { type WorkerGroupOptions } from './src/group'
export { type LoopTermination } from './src/workers'
export { writeToChannel } from './src/remote'
export { FileRegion, SharedFile, type FileRegionOptions } from './src/file-region'
export { HttpServerCodec, HttpRequest, HttpResponse, HttpContent, type HttpServerCodecOptions } from './src/http'
export { HttpClientCodec, HttpClientRequest, HttpClientResponse, type HttpClientCodecOptions } from './src/http-client'
export { RespDecoder, RespReply, RespErrorReply, Resp, type RespDecoderOptions } from './src/resp'
export {
  WebSocketServerProtocolHandler,
  WebSocketEchoHandler,
  TextWebSocketFrame,
  BinaryWebSocketFrame,
  PingWebSocketFrame,
  PongWebSocketFrame,
  CloseWebSocketFrame,
  type WebSocketFrame,
  type WebSocketServerProtocolOptions,
  type PerMessageDeflateOptions,
} from './src/ws'
export { subscribe, unsubscribe, publish, subscriberCount, topicStats, type PublishOptions, type TopicStats } from './src/ws-topics'
export { WebSocketClientProtocolHandler, WebSocketHandshakeEvent, type WebSocketClientProtocolOptions } from './src/ws-client'
export { WebSocket, type SendOptions, type WebSocketData } from './src/ws-socket'
export { type WebSocketClientOptions } from './src/ws-client-connect'
export { WebSocketServer, type WebSocketServerOptions, type WebSocketRequest } from './src/ws-server'
export { type WhatwgEvent, type WhatwgListener } from './src/ws-events'
export {
  SslContext,
  SslHandler,
  SslHandshakeCompletionEvent,
  SslCloseCompletionEvent,
  type SslContextOptions,
  type SslIdentity,
  type PemIdentity,
  type KeyObjectPem,
  type PfxIdentity,
  type PfxObject,
  type SNICallback,
  type ALPNCallback,
  type ALPNCallbackInfo,
  type SharedSslContext,
  type TlsInfo,
  type PeerCertificate,
} from './src/tls'
export { HAProxyMessageDecoder, HAProxyMessage, HAProxyTlvType, type HAProxyDecoderOptions, type HAProxyProtocol, type HAProxySsl, type HAProxyTlv } from './src/haproxy'
export { ChannelDuplex, type ChannelDuplexOptions } from './src/duplex'
export { ChannelMessages, type ChannelMessagesOptions } from './src/messages'
export { diagnostics, type SocketMessage, type ListenMessage, type CloseMessage, type ConnectContext, type LoopShutdownMessage, type HandlerTraceContext } from './src/diagnostics'
export { AbortError, type AbortOptions } from './src/abort'
