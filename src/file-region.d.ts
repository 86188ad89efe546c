/** Where a region starts and how long it is (defaults: the whole file). */
export interface FileRegionOptions {
    /** Offset in the file (default 0). */
    position?: number;
    /** Bytes to send (default: to the end of the file). */
    count?: number;
}
export declare class FileRegion {
    #private;
    /** Offset of the first byte in the file. */
    readonly position: number;
    /** Bytes the region sends. */
    readonly count: number;
    /**
     * Opens `path` for reading and makes a region of it (`fs.openSync(path, 'r')`: `ENOENT`,
     * `EACCES`, ... are thrown as node:fs throws them). Not a directory or other non-regular
     * file (`ERR_INVALID_ARG_VALUE`).
     */
    static open(path: string | Buffer | URL, options?: FileRegionOptions): FileRegion;
    /**
     * A region of the open file `fd`, which it takes over (do not close or use `fd` afterwards;
     * `close()` the region if it is never written). `position + count` must lie within the file.
     */
    constructor(fd: number, position?: number, count?: number);
    /** The descriptor while the region owns it; -1 once it was written or closed. */
    get fd(): number;
    /** Closes the file of a region that will not be written (does nothing after a write). */
    close(): void;
    [Symbol.dispose](): void;
}
/** Bytes of a region's layout on the boundary (crates/node/src/channel/file_wire.rs). */
export declare const REGION_BYTES = 20;
