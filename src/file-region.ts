/**
 * `FileRegion`: a range of a file written to a channel without passing through JS or user
 * space (Netty's `DefaultFileRegion`): `ch.writeAndFlush(FileRegion.open(path))`, or as an HTTP
 * response's body. A plain socket sends it with `sendfile(2)`; an `SslHandler` reads and
 * encrypts it piece by piece while the channel is writable.
 *
 * Ground rules:
 * - A region owns an open file descriptor (opened by `FileRegion.open`, or given to the
 *   constructor, which takes it over). Writing the region hands the descriptor to the native
 *   side, which closes it once the region is written or its write failed: a region is sent once
 *   (Netty releases a region after its write). Writing it again throws `ERR_FILE_REGION_SENT`.
 * - A region never written is closed by `close()` (or `[Symbol.dispose]`); one forgotten is
 *   closed when collected.
 * - The range is checked against the file's size when the region is made; a file truncated
 *   afterwards fails the write and closes the channel (the peer would wait for the rest).
 * - It counts 0 bytes towards the channel's water marks (it holds no memory), as in Netty.
 * - A `SharedFile` is a file opened once for many regions (a static server's hot files): its
 *   descriptor goes to the native side when it is made, each region written names it, and a
 *   region of it can be written again and again. `close()` frees it once the writes made so far
 *   were applied (a microtask later); regions already on their way keep the file open until
 *   they are sent. A shared file belongs to the thread that opened it (its loops' channels).
 */
import { closeSync, fstatSync, openSync } from 'node:fs'
import { native } from './binding'
import { NetloopError, checkInteger, fromNative } from './errors'

const MAX_SAFE = Number.MAX_SAFE_INTEGER

/** Closes the descriptors of regions collected without being written or closed. */
const unclosed = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd)
  } catch {
    // already closed elsewhere: nothing to release
  }
})

/** Where a region starts and how long it is (defaults: the whole file). */
export interface FileRegionOptions {
  /** Offset in the file (default 0). */
  position?: number
  /** Bytes to send (default: to the end of the file). */
  count?: number
}

/** Set only while `SharedFile.region` makes a region (module-private). */
let sharing: SharedFile | undefined

export class FileRegion {
  #fd: number
  #shared: SharedFile | undefined
  /** Offset of the first byte in the file. */
  readonly position: number
  /** Bytes the region sends. */
  readonly count: number

  /**
   * Opens `path` for reading and makes a region of it (`fs.openSync(path, 'r')`: `ENOENT`,
   * `EACCES`, ... are thrown as node:fs throws them). Not a directory or other non-regular
   * file (`ERR_INVALID_ARG_VALUE`).
   */
  static open(path: string | Buffer | URL, options: FileRegionOptions = {}): FileRegion {
    const fd = openSync(path, 'r')
    try {
      return new FileRegion(fd, options.position, options.count)
    } catch (e) {
      closeSync(fd)
      throw e
    }
  }

  /**
   * A region of the open file `fd`, which it takes over (do not close or use `fd` afterwards;
   * `close()` the region if it is never written). `position + count` must lie within the file.
   */
  constructor(fd: number, position = 0, count?: number) {
    const shared = sharing
    sharing = undefined
    checkInteger('position', position, 0, MAX_SAFE)
    if (shared) {
      if (position > shared.size) throw new NetloopError('ERR_OUT_OF_RANGE', `The value of "position" is out of range. It must be <= the file's size (${shared.size}). Received ${position}`)
      this.count = checkInteger('count', count ?? shared.size - position, 0, shared.size - position)
      this.position = position
      this.#fd = -1
      this.#shared = shared
      return
    }
    checkInteger('fd', fd, 0, 2 ** 31 - 1)
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw new NetloopError('ERR_INVALID_ARG_VALUE', `A file region needs a regular file; descriptor ${fd} is not one`)
    if (position > stat.size) throw new NetloopError('ERR_OUT_OF_RANGE', `The value of "position" is out of range. It must be <= the file's size (${stat.size}). Received ${position}`)
    const n = count ?? stat.size - position
    checkInteger('count', n, 0, stat.size - position)
    this.#fd = fd
    this.position = position
    this.count = n
    unclosed.register(this, fd, this)
  }

  /** The descriptor while the region owns it; -1 once it was written or closed (and always for a region of a `SharedFile`). */
  get fd(): number {
    return this.#fd
  }

  /** The shared file this region is part of, if any (such a region can be written many times). */
  get shared(): SharedFile | undefined {
    return this.#shared
  }

  /** Closes the file of a region that will not be written (does nothing after a write, or for a region of a `SharedFile`). */
  close(): void {
    if (this.#fd < 0) return
    const fd = this.#fd
    this.#fd = -1
    unclosed.unregister(this)
    closeSync(fd)
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /**
   * @internal What the layout's `fd` field carries: the descriptor, handed to the native side
   * (once; throws if already sent or closed), or a shared file's id with the top bit set.
   */
  _handOver(): number {
    if (this.#shared) return this.#shared._idForWrite()
    const fd = this.#fd
    if (fd < 0) throw new NetloopError('ERR_FILE_REGION_SENT', 'This FileRegion was already written or closed: a region is sent once (make a new one)')
    this.#fd = -1
    unclosed.unregister(this)
    return fd
  }
}

/** Frees the native ids of shared files collected without `close()`. */
const sharedIds = new FinalizationRegistry<number>((id) => native.fileRelease(id))

/** The `fd` field's bit that marks a shared file's id (crates/wire/src/file_wire.rs). */
const SHARED_BIT = 2 ** 31

/**
 * A file opened once for many regions: `const f = SharedFile.open(path)`, then
 * `ctx.write(f.region())` for every request (or `f.region(position, count)` for a part). The
 * file is read when each region is sent, at that region's own offset.
 */
export class SharedFile {
  #id: number
  /** The file's size when it was opened (regions are checked against it). */
  readonly size: number

  /** Opens `path` for reading (`ENOENT`, `EACCES`, ... as node:fs throws them); a regular file only. */
  static open(path: string | Buffer | URL): SharedFile {
    const fd = openSync(path, 'r')
    try {
      return new SharedFile(fd)
    } catch (e) {
      closeSync(fd)
      throw e
    }
  }

  /** Takes over the open descriptor `fd` of a regular file (do not use or close `fd` afterwards). */
  constructor(fd: number) {
    checkInteger('fd', fd, 0, 2 ** 31 - 1)
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw new NetloopError('ERR_INVALID_ARG_VALUE', `A shared file needs a regular file; descriptor ${fd} is not one`)
    this.size = stat.size
    try {
      this.#id = native.fileShare(fd)
    } catch (e) {
      throw fromNative(e)
    }
    sharedIds.register(this, this.#id, this)
  }

  /** A region of this file (the whole file by default); it can be written any number of times. */
  region(position = 0, count?: number): FileRegion {
    if (this.#id < 0) throw closedFile()
    sharing = this
    try {
      return new FileRegion(-1, position, count)
    } finally {
      sharing = undefined
    }
  }

  /** True until `close()`. */
  get isOpen(): boolean {
    return this.#id >= 0
  }

  /** Closes the file once the regions written so far were applied; regions made of it cannot be written afterwards. */
  close(): void {
    if (this.#id < 0) return
    const id = this.#id
    this.#id = -1
    sharedIds.unregister(this)
    // Ops naming the id are applied before the JS job that queued them ends: free it after.
    queueMicrotask(() => native.fileRelease(id))
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** @internal The layout's `fd` field for a region of this file; throws once closed. */
  _idForWrite(): number {
    if (this.#id < 0) throw closedFile()
    return SHARED_BIT + this.#id
  }
}

const closedFile = () => new NetloopError('ERR_FILE_CLOSED', 'This SharedFile was closed: its regions cannot be written any more')

/** Bytes of a region's layout on the boundary (crates/wire/src/file_wire.rs). */
export const REGION_BYTES = 20

/** @internal Writes `r`'s layout at `at` and hands its descriptor over; the end. */
export function writeRegion(r: FileRegion, buf: Buffer, at: number): number {
  buf.writeUInt32LE(r._handOver(), at)
  buf.writeDoubleLE(r.position, at + 4)
  buf.writeDoubleLE(r.count, at + 12)
  return at + REGION_BYTES
}

/** @internal Closes the file of a region that will not reach the native side (a closed channel). */
export function dropUnsent(msg: unknown): void {
  if (msg instanceof FileRegion) msg.close()
  // An HttpResponse or HttpClientRequest whose body is a region.
  else if (typeof msg === 'object' && msg !== null && (msg as { file?: unknown }).file instanceof FileRegion) (msg as { file: FileRegion }).file.close()
}
