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
    /** The descriptor while the region owns it; -1 once it was written or closed (and always for a region of a `SharedFile`). */
    get fd(): number;
    /** The shared file this region is part of, if any (such a region can be written many times). */
    get shared(): SharedFile | undefined;
    /** Closes the file of a region that will not be written (does nothing after a write, or for a region of a `SharedFile`). */
    close(): void;
    [Symbol.dispose](): void;
}
/**
 * A file opened once for many regions: `const f = SharedFile.open(path)`, then
 * `ctx.write(f.region())` for every request (or `f.region(position, count)` for a part). The
 * file is read when each region is sent, at that region's own offset.
 */
export declare class SharedFile {
    #private;
    /** The file's size when it was opened (regions are checked against it). */
    readonly size: number;
    /** Opens `path` for reading (`ENOENT`, `EACCES`, ... as node:fs throws them); a regular file only. */
    static open(path: string | Buffer | URL): SharedFile;
    /** Takes over the open descriptor `fd` of a regular file (do not use or close `fd` afterwards). */
    constructor(fd: number);
    /** A region of this file (the whole file by default); it can be written any number of times. */
    region(position?: number, count?: number): FileRegion;
    /** True until `close()`. */
    get isOpen(): boolean;
    /** Closes the file once the regions written so far were applied; regions made of it cannot be written afterwards. */
    close(): void;
    [Symbol.dispose](): void;
}
/** Bytes of a region's layout on the boundary (crates/node/src/channel/file_wire.rs). */
export declare const REGION_BYTES = 20;
