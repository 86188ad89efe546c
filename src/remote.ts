/** Writing to a channel of any thread of the process by its id (bytes only). */
import { native } from './binding'
import { NetloopError } from './errors'

const nativeWrite = native.writeToChannel

/**
 * Writes and flushes `data` to the channel with this `id`, wherever it lives in the process
 * (another worker's loop included): the write becomes a task of the channel's loop, so writes
 * from one thread arrive in order. Only bytes cross threads. Returns false if no open channel
 * has that id.
 */
export function writeToChannel(id: number, data: Buffer | Uint8Array | string): boolean {
  if (typeof id !== 'number' || !Number.isInteger(id) || id <= 0) {
    throw new NetloopError('ERR_INVALID_ARG_VALUE', `The "id" argument must be a channel id (a positive integer). Received ${String(id)}`)
  }
  const buf = typeof data === 'string' ? Buffer.from(data) : data instanceof Uint8Array ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : undefined
  if (!buf) throw new NetloopError('ERR_INVALID_ARG_TYPE', 'The "data" argument must be a Buffer, a Uint8Array or a string')
  return nativeWrite(id, buf)
}
