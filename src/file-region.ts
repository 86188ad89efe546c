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
 */
import { closeSync, fstatSync, openSync } from 'node:fs'
import { NetloopError, checkInteger } from './errors'

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

export class FileRegion {
  #fd: number
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
    checkInteger('fd', fd, 0, 2 ** 31 - 1)
    checkInteger('position', position, 0, MAX_SAFE)
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

  /** The descriptor while the region owns it; -1 once it was written or closed. */
  get fd(): number {
    return this.#fd
  }

  /** Closes the file of a region that will not be written (does nothing after a write). */
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

  /** @internal Hands the descriptor to the native side (once); throws if already sent or closed. */
  _handOver(): number {
    const fd = this.#fd
    if (fd < 0) throw new NetloopError('ERR_FILE_REGION_SENT', 'This FileRegion was already written or closed: a region is sent once (make a new one)')
    this.#fd = -1
    unclosed.unregister(this)
    return fd
  }
}

/** Bytes of a region's layout on the boundary (crates/node/src/channel/file_wire.rs). */
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
  else if (typeof msg === 'object' && msg !== null && (msg as { file?: unknown }).file instanceof FileRegion) (msg as { file: FileRegion }).file.close()
}
