/**
 * `ChannelPipeline`: the ordered handlers of a channel, JS and native mixed in any order.
 *
 * Event flow (the same diagram is in docs/guide.md, "A mixed native/JS pipeline"):
 *
 *              native (Rust, the loop thread)          ┊   JS (the same thread)
 *                                                      ┊
 *  inbound     socket ─► head ─► decoder ─► stand-in ══╪══► parser ─► app ─► tail
 *  head → tail                               of parser ┊                       (unhandled
 *                                                      ┊                        reported)
 *  outbound    socket ◄─ head ◄─ prepender ◄ stand-in ◄╪═══ parser ◄─ app ◄─ channel.write
 *  tail → head                               of parser ┊
 *                                                      ┊
 *  ─►  a call on one side: an event between two JS (or two native) handlers stays there
 *  ══► the boundary, crossed only where a native handler and a JS one are neighbours:
 *      inbound as event records (src/hub-delivery.ts, one call per loop iteration, bytes in
 *      one arena); outbound as op records (JS -> channel/ops.rs, applied when that call
 *      returns, or once per microtask checkpoint). A JS handler without methods of a
 *      direction is passed by natively (its stand-in forwards), so the boundary is not crossed.
 *
 * Ground rules:
 * - The JS list here mirrors the native pipeline name for name: every change is made on the
 *   native side first (which checks it), then here. JS handlers have a native stand-in that
 *   receives what native handlers pass to them.
 * - Inbound events go head → tail, outbound operations tail → head. A JS handler without the
 *   method is skipped in JS; an event crosses to native code only where it must. A handler's
 *   methods are looked up once, when it is added (as Netty computes its skip mask).
 * - A handler that throws (or whose `async` method rejects) sends the error to the *next*
 *   handler's `exceptionCaught`; an outbound method that throws fails the operation's
 *   promise instead (routing.ts moves events and handles these). What reaches the tail
 *   unhandled is reported with the channel id.
 * - A removed context keeps its links, so an event already passing through it goes on.
 */
import type { Channel } from './channel';
import { ChannelHandlerContext } from './context';
import { type ChannelHandler } from './handlers';
import { NativeHandler } from './codecs';
import { type UnhandledExceptionHandler } from './unhandled';
/** A handler class (JS or native), to find a handler by type as Netty's `get(Class)` does. */
export type HandlerClass<T extends object = object> = abstract new (...args: any[]) => T;
/** How a handler is named in pipeline look-ups: by name, by the handler itself, or by its class. */
export type HandlerRef = string | ChannelHandler | NativeHandler | HandlerClass;
export type { UnhandledExceptionHandler } from './unhandled';
export declare class ChannelPipeline {
    #private;
    readonly channel: Channel;
    /**
     * Replaces what receives exceptions that reach the tail of any pipeline (default: printed
     * to stderr with the channel id, except a peer that went away, ECONNRESET/EPIPE/
     * ECONNABORTED as error or cause, which is one line of `NODE_DEBUG=netloop`; `undefined`
     * puts the default back). The channel stays as it is, as in Netty. A setting of the
     * whole JS thread (each worker thread has its own), for every loop, present and future.
     */
    static setUnhandledExceptionHandler(handler: UnhandledExceptionHandler | undefined): void;
    /** Handler names, head to tail. */
    names(): string[];
    /**
     * The context of the handler with this name, of this handler object, or (given a class) of
     * the first handler that is an instance of it, head to tail (Netty's `context(Class)`).
     */
    context(which: HandlerRef): ChannelHandlerContext | undefined;
    /** The handler with this name, or the first one of this class (JS object or native handler description). */
    get<T extends object>(type: HandlerClass<T>): T | undefined;
    get(name: string): ChannelHandler | NativeHandler | undefined;
    /** Adds `handler` first (named `name`, or a generated name such as `LineBasedFrameDecoder#0`). */
    addFirst(handler: ChannelHandler | NativeHandler): this;
    addFirst(name: string, handler: ChannelHandler | NativeHandler): this;
    /** Adds `handler` last (named `name`, or a generated name). */
    addLast(handler: ChannelHandler | NativeHandler): this;
    addLast(name: string, handler: ChannelHandler | NativeHandler): this;
    /** Removes the handler (by name, object or class) if it is in the pipeline; returns it, or undefined. */
    removeIfExists<T extends object>(type: HandlerClass<T>): T | undefined;
    removeIfExists(nameOrHandler: string | ChannelHandler | NativeHandler): ChannelHandler | NativeHandler | undefined;
    /** Adds `handler` before the handler named `baseName` (named `name`, or a generated name). */
    addBefore(baseName: string, handler: ChannelHandler | NativeHandler): this;
    addBefore(baseName: string, name: string, handler: ChannelHandler | NativeHandler): this;
    /** Adds `handler` after the handler named `baseName` (named `name`, or a generated name). */
    addAfter(baseName: string, handler: ChannelHandler | NativeHandler): this;
    addAfter(baseName: string, name: string, handler: ChannelHandler | NativeHandler): this;
    /** Removes a handler (by name, object, or the first one of a class) and returns it. */
    remove<T extends object>(type: HandlerClass<T>): T;
    remove(nameOrHandler: string | ChannelHandler | NativeHandler): ChannelHandler | NativeHandler;
    /**
     * Puts `handler` named `newName` in the place of `old`, which is returned. The new
     * handler's `handlerAdded` runs before the old one's `handlerRemoved`; what the old one
     * passes on afterwards goes through the new one, as in Netty.
     */
    replace(old: HandlerRef, newName: string, handler: ChannelHandler | NativeHandler): ChannelHandler | NativeHandler;
    fireChannelRead(msg: unknown): this;
    fireChannelReadComplete(): this;
    fireUserEventTriggered(event: unknown): this;
    fireExceptionCaught(error: unknown): this;
}
