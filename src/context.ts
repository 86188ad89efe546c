/**
 * `ChannelHandlerContext`: a handler's place in its pipeline. Inbound events go to the next
 * handler (`fire*`), outbound operations to the previous one (`write`, `flush`, `read`,
 * `close`). Between two JS handlers an event stays in JS; it crosses into native code only
 * where a native handler (a decoder, the head) sits next to a JS one.
 */
import type { Channel } from './channel'
import type { EventLoop } from './loop'
import type { ChannelHandler, Outbound } from './handlers'
import type { NativeHandler } from './codecs'
import type { ChannelPipeline } from './pipeline'
import type { ChannelPromise } from './promise'
import { EVENT_COUNT, PipelineEvent } from './events'

/** @internal What a pipeline node is. */
export const enum Kind {
  Js = 0,
  Native = 1,
  Head = 2,
  Tail = 3,
}

/** @internal A handler method, as the pipeline calls it. */
export type HandlerMethod = (...a: unknown[]) => unknown

/** The handler method for each pipeline event or operation. */
export const METHOD_NAMES: ReadonlyArray<[number, keyof ChannelHandler]> = [
  [PipelineEvent.ChannelRegistered, 'channelRegistered'],
  [PipelineEvent.ChannelUnregistered, 'channelUnregistered'],
  [PipelineEvent.ChannelActive, 'channelActive'],
  [PipelineEvent.ChannelInactive, 'channelInactive'],
  [PipelineEvent.ChannelRead, 'channelRead'],
  [PipelineEvent.ChannelReadComplete, 'channelReadComplete'],
  [PipelineEvent.UserEventTriggered, 'userEventTriggered'],
  [PipelineEvent.ExceptionCaught, 'exceptionCaught'],
  [PipelineEvent.ChannelWritabilityChanged, 'channelWritabilityChanged'],
  [PipelineEvent.Write, 'write'],
  [PipelineEvent.Flush, 'flush'],
  [PipelineEvent.Read, 'read'],
  [PipelineEvent.Close, 'close'],
]
const NO_METHODS: ReadonlyArray<HandlerMethod | undefined> = new Array<HandlerMethod | undefined>(EVENT_COUNT).fill(undefined)

/**
 * The methods `handler` has, by pipeline event: looked up once, when the handler is added (as
 * Netty computes a handler's skip mask once), so that passing an event along reads an array
 * slot instead of a property of handlers of every shape.
 */
function methodTable(handler: ChannelHandler | undefined): ReadonlyArray<HandlerMethod | undefined> {
  if (handler === undefined) return NO_METHODS
  // Tables are shared: by the handler object (one handler added to many pipelines), or by its
  // prototype when the methods all come from there (one class, an instance per channel).
  // Read afresh at every add, without allocating while the shared copy still matches (a
  // `childHandler` adds handlers for each connection).
  let own = false
  for (let i = 0; i < METHOD_NAMES.length && !own; i++) own = Object.hasOwn(handler, METHOD_NAMES[i][1])
  const key: object = own ? handler : (Object.getPrototypeOf(handler) ?? handler)
  const cached = tables.get(key)
  if (cached !== undefined && matches(cached, handler)) return cached
  const table = new Array<HandlerMethod | undefined>(EVENT_COUNT).fill(undefined)
  for (let i = 0; i < METHOD_NAMES.length; i++) table[METHOD_NAMES[i][0]] = methodOf(handler, METHOD_NAMES[i][1])
  tables.set(key, table)
  return table
}

/** The handler's method of that name, if it is a function. */
function methodOf(handler: ChannelHandler, name: keyof ChannelHandler): HandlerMethod | undefined {
  const fn = (handler as Record<string, unknown>)[name]
  return typeof fn === 'function' ? (fn as HandlerMethod) : undefined
}

/** True if `table` holds exactly the handler's methods. */
function matches(table: ReadonlyArray<HandlerMethod | undefined>, handler: ChannelHandler): boolean {
  for (let i = 0; i < METHOD_NAMES.length; i++) if (table[METHOD_NAMES[i][0]] !== methodOf(handler, METHOD_NAMES[i][1])) return false
  return true
}
const tables = new WeakMap<object, ReadonlyArray<HandlerMethod | undefined>>()

export class ChannelHandlerContext {
  /** @internal */ _prev: ChannelHandlerContext | undefined
  /** @internal */ _next: ChannelHandlerContext | undefined
  /** @internal */ _removed = false
  /**
   * @internal True while the context gave back a read of its codec's latest firing
   * (src/hub-delivery.ts, `#givesBack`): a field, not a WeakSet looked up for every read.
   */
  _holding = false
  /** @internal The handler's methods by pipeline event (see `methodTable`). */
  readonly _methods: ReadonlyArray<HandlerMethod | undefined>

  /** @internal The JS handler or the native handler's description, by `_kind` (one field for both). */
  readonly _handler: ChannelHandler | NativeHandler | undefined

  /** @internal */
  constructor(
    /** The handler's name in the pipeline. */
    readonly name: string,
    handler: ChannelHandler | undefined,
    nativeHandler: NativeHandler | undefined,
    /** The pipeline this context belongs to. */
    readonly pipeline: ChannelPipeline,
    /** @internal */ readonly _kind: Kind,
    /** @internal */ readonly _id: number,
  ) {
    this._handler = handler ?? nativeHandler
    this._methods = methodTable(handler)
  }

  /** The JS handler (undefined for a native handler and the pipeline's ends). */
  get handler(): ChannelHandler | undefined {
    return this._kind === Kind.Js ? (this._handler as ChannelHandler) : undefined
  }

  /** The native handler's description (undefined for JS handlers). */
  get nativeHandler(): NativeHandler | undefined {
    return this._kind === Kind.Native ? (this._handler as NativeHandler) : undefined
  }

  /** The channel of the pipeline. */
  get channel(): Channel {
    return this.pipeline.channel
  }

  /** The loop that runs this handler (the channel's loop). */
  get executor(): EventLoop {
    return this.pipeline.channel.eventLoop
  }

  /** True once the handler was removed from its pipeline. */
  get isRemoved(): boolean {
    return this._removed
  }

  // ---- inbound: to the next handler ----
  fireChannelRegistered(): this {
    this.pipeline._fireInbound(this, PipelineEvent.ChannelRegistered, undefined)
    return this
  }
  fireChannelUnregistered(): this {
    this.pipeline._fireInbound(this, PipelineEvent.ChannelUnregistered, undefined)
    return this
  }
  fireChannelActive(): this {
    this.pipeline._fireInbound(this, PipelineEvent.ChannelActive, undefined)
    return this
  }
  fireChannelInactive(): this {
    this.pipeline._fireInbound(this, PipelineEvent.ChannelInactive, undefined)
    return this
  }
  fireChannelRead(msg: unknown): this {
    this.pipeline._fireInbound(this, PipelineEvent.ChannelRead, msg)
    return this
  }
  fireChannelReadComplete(): this {
    this.pipeline._fireInbound(this, PipelineEvent.ChannelReadComplete, undefined)
    return this
  }
  fireUserEventTriggered(event: unknown): this {
    this.pipeline._fireInbound(this, PipelineEvent.UserEventTriggered, event)
    return this
  }
  fireExceptionCaught(error: unknown): this {
    this.pipeline._fireInbound(this, PipelineEvent.ExceptionCaught, error)
    return this
  }
  fireChannelWritabilityChanged(): this {
    this.pipeline._fireInbound(this, PipelineEvent.ChannelWritabilityChanged, undefined)
    return this
  }

  // ---- outbound: to the previous handler ----

  /**
   * Writes `msg` towards the head (not flushed). Without `promise` the outcome is not
   * reported (Netty's `write(msg)`: a promise nobody listens to); with one
   * (`ctx.newPromise()`) it completes that promise, which is returned and can be awaited;
   * with `ctx.voidPromise()` a failure goes to `exceptionCaught`.
   */
  write(msg: Outbound): void
  write(msg: Outbound, promise: ChannelPromise): ChannelPromise
  write(msg: Outbound, promise?: ChannelPromise): ChannelPromise | void {
    this.pipeline._fireOutbound(this, PipelineEvent.Write, msg, promise ?? this.pipeline._silentPromise)
    return promise
  }

  /** `write` then `flush`. */
  writeAndFlush(msg: Outbound): void
  writeAndFlush(msg: Outbound, promise: ChannelPromise): ChannelPromise
  writeAndFlush(msg: Outbound, promise?: ChannelPromise): ChannelPromise | void {
    this.pipeline._fireOutbound(this, PipelineEvent.Write, msg, promise ?? this.pipeline._silentPromise)
    this.pipeline._fireOutbound(this, PipelineEvent.Flush, undefined, undefined)
    return promise
  }

  /** Writes what was written so far to the socket. */
  flush(): this {
    this.pipeline._fireOutbound(this, PipelineEvent.Flush, undefined, undefined)
    return this
  }

  /** Asks for one more read (with `autoRead` off). */
  read(): this {
    this.pipeline._fireOutbound(this, PipelineEvent.Read, undefined, undefined)
    return this
  }

  /** Closes the channel; resolves once it is closed. */
  close(promise: ChannelPromise = this.newPromise()): ChannelPromise {
    this.pipeline._fireOutbound(this, PipelineEvent.Close, undefined, promise)
    return promise
  }

  /** A promise for an outbound operation, to await it. */
  newPromise(): ChannelPromise {
    return this.pipeline._newPromise()
  }

  /** The channel's void promise (Netty's `voidPromise()`): it cannot be awaited, and a
   * failure of the operation it is given to goes to `exceptionCaught`. */
  voidPromise(): ChannelPromise {
    return this.pipeline._voidPromise
  }
}
