/** Throws if the native addon speaks another version of the boundary protocol. */
export declare function checkWire(): void;
/** Event records per delivery call, op records per buffer, write-arena bytes. */
export declare const EVENT_CAPACITY = 4096;
export declare const OP_CAPACITY = 4096;
export declare const ARENA_BYTES: number;
