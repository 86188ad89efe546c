/**
 * What a `WebSocket` (src/ws-socket.ts) sends and checks: the data `send` takes, its options,
 * close codes an application may send, and the conversions between them.
 */
import { Buffer } from 'node:buffer';
/** What `send` takes (as `ws`: numbers are sent as text). */
export type WebSocketData = string | Buffer | ArrayBuffer | ArrayBufferView | number;
/** Options of `send` (`ws`'s; `compress` and `mask` are accepted and ignored). */
export interface SendOptions {
    /** Send as binary (default: true for binary data, false for strings). */
    binary?: boolean;
    /** The last piece of a message (default true); pieces are joined in JS and sent whole. */
    fin?: boolean;
    compress?: boolean;
    mask?: boolean;
}
export type Callback = (err?: Error) => void;
export declare function toBuffer(data: WebSocketData): Buffer;
/** A close code the application may send (RFC 6455 §7.4, as `ws` checks). */
export declare function isSendableCode(code: number): boolean;
export declare function describe(e: unknown): string;
export declare function toArrayBuffer(b: Buffer): ArrayBuffer;
