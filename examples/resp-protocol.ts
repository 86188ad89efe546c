// The RESP2 wire format of the RESP server: reply values and their encoder (an outbound
// handler), and the request decoder (an inbound handler keeping a cumulation across reads,
// multibulk and inline commands, Redis' protocol-error texts).
import { Buffer } from 'node:buffer' // not the global, a getter in Node
import type { ChannelHandler, ChannelHandlerContext } from 'netloop'

// ---------------------------------------------------------------------------------------------
// Replies

/** A simple string reply (`+OK`). */
export class Simple {
  readonly bytes: Buffer
  constructor(text: string) {
    this.bytes = Buffer.from(`+${text}\r\n`, 'latin1')
  }
}

/** An error reply (`-ERR ...`); Redis puts no CR or LF in one. */
export class ReplyError {
  constructor(readonly message: string) {}
}

/** What a command returns: Buffer or string = bulk string, null = nil, number/bigint = integer. */
export type Reply = Simple | ReplyError | Buffer | string | null | number | bigint | Reply[]

export const OK = new Simple('OK')
export const PONG = new Simple('PONG')
export const err = (message: string) => new ReplyError(message)
export const NOT_INTEGER = err('ERR value is not an integer or out of range')
export const SYNTAX = err('ERR syntax error')

export const CRLF = Buffer.from('\r\n')
export const NIL = Buffer.from('$-1\r\n')

export function encode(reply: Reply, out: Buffer[]): void {
  if (reply instanceof Simple) out.push(reply.bytes)
  else if (reply instanceof ReplyError) out.push(Buffer.from(`-${reply.message.replace(/[\r\n]/g, ' ')}\r\n`, 'latin1'))
  else if (reply === null) out.push(NIL)
  else if (typeof reply === 'number' || typeof reply === 'bigint') out.push(Buffer.from(`:${reply}\r\n`))
  else if (Array.isArray(reply)) {
    out.push(Buffer.from(`*${reply.length}\r\n`))
    for (const r of reply) encode(r, out)
  } else {
    const b = typeof reply === 'string' ? Buffer.from(reply) : reply
    out.push(Buffer.from(`$${b.length}\r\n`), b, CRLF)
  }
}

/** Outbound: turns reply values into RESP bytes (Netty's `RedisEncoder`). */
export const respEncoder: ChannelHandler = {
  write(ctx, msg: Reply, promise) {
    if (msg instanceof Simple) {
      ctx.write(msg.bytes, promise)
      return
    }
    const out: Buffer[] = []
    encode(msg, out)
    ctx.write(out.length === 1 ? out[0] : Buffer.concat(out), promise)
  },
}

// ---------------------------------------------------------------------------------------------
// Requests

/** A malformed request: the reply is this error, then the connection closes (as Redis does). */
export class ProtocolError extends Error {}

export const MAX_INLINE = 64 * 1024
export const MAX_MULTIBULK = 1024 * 1024
export const MAX_BULK = 512 * 1024 * 1024
export const NEED_MORE = -1

/** Splits an inline command as redis-cli does (`sdssplitargs`): spaces, "..." with escapes, '...'. */
export function splitInline(line: string): string[] {
  const args: string[] = []
  let i = 0
  const n = line.length
  for (;;) {
    while (i < n && /\s/.test(line[i])) i++
    if (i >= n) return args
    let cur = ''
    const q = line[i] === '"' || line[i] === "'" ? line[i++] : ''
    for (;;) {
      if (i >= n) {
        if (q) throw new ProtocolError('Protocol error: unbalanced quotes in request')
        break
      }
      const c = line[i]
      if (!q && /\s/.test(c)) break
      if (q && c === q) {
        i++
        if (i < n && !/\s/.test(line[i])) throw new ProtocolError('Protocol error: unbalanced quotes in request')
        break
      }
      if (q === '"' && c === '\\' && i + 1 < n) {
        const e = line[++i]
        if (e === 'x' && /^[0-9a-fA-F]{2}$/.test(line.slice(i + 1, i + 3))) {
          cur += String.fromCharCode(parseInt(line.slice(i + 1, i + 3), 16))
          i += 2
        } else cur += ({ n: '\n', r: '\r', t: '\t', b: '\b', a: '\x07' } as Record<string, string>)[e] ?? e
      } else if (q === "'" && c === '\\' && line[i + 1] === "'") {
        cur += "'"
        i++
      } else cur += c
      i++
    }
    args.push(cur)
  }
}

/**
 * Inbound: RESP requests to commands (`Buffer[]`, one per command, passed on with
 * `ctx.fireChannelRead`). Both request forms are read: multibulk (`*2\r\n$3\r\nGET\r\n$1\r\na\r\n`,
 * what clients send) and inline (`GET a\r\n`, what people type). Bytes that do not make a whole
 * command yet stay in the cumulation until the next read; bulk strings may hold any bytes.
 *
 * Backpressure (as the native decoder's `pauseWhileUnwritable`): once the channel turns
 * unwritable (`channelWritabilityChanged`, which fires inside the write of a reply that passed
 * the high water mark), no further command is passed on and reading stops (`autoRead` off);
 * the commands left wait in the cumulation until the channel drains. A client pipelining GETs
 * of a large value without reading then costs about the high water mark, not a reply per
 * command of the read.
 */
export class RespDecoder implements ChannelHandler {
  #chunks: Buffer[] = []
  #size = 0
  /** Bytes the command at the front needs, once known: fewer buffered means don't parse yet. */
  #need = 0
  #failed = false
  /** The channel is not writable: no command is passed on. */
  #unwritable = false
  /** Commands wait for the channel to drain (this decoder turned `autoRead` off). */
  #paused = false

  channelRead(ctx: ChannelHandlerContext, msg: Buffer) {
    if (this.#failed) return
    this.#chunks.push(msg)
    this.#size += msg.length
    if (this.#size < this.#need || this.#paused) return
    this.#decode(ctx)
  }

  channelWritabilityChanged(ctx: ChannelHandlerContext) {
    this.#unwritable = !ctx.channel.isWritable
    if (!this.#unwritable && this.#paused && ctx.channel.isOpen) {
      this.#paused = false
      ctx.channel.config.autoRead = true
      if (this.#decode(ctx)) ctx.fireChannelReadComplete() // the replies to what waited are flushed
    }
    ctx.fireChannelWritabilityChanged()
  }

  /** Passes on the buffered commands (until the channel is unwritable); true if it passed some. */
  #decode(ctx: ChannelHandlerContext): boolean {
    if (this.#size === 0 || this.#failed) return false
    const buf = this.#chunks.length === 1 ? this.#chunks[0] : Buffer.concat(this.#chunks, this.#size)
    let off = 0
    let fired = false
    try {
      while (off < buf.length) {
        if (this.#unwritable) {
          this.#paused = true
          ctx.channel.config.autoRead = false
          break
        }
        const args: Buffer[] = []
        const end = buf[off] === 0x2a /* '*' */ ? this.#multibulk(buf, off, args) : this.#inline(buf, off, args)
        if (end === NEED_MORE) break
        off = end
        if (args.length > 0) {
          fired = true
          ctx.fireChannelRead(args)
        }
      }
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e
      this.#failed = true
      this.#chunks = []
      this.#size = 0
      ctx.fireExceptionCaught(e)
      return fired
    }
    const rest = buf.subarray(off)
    this.#chunks = rest.length > 0 ? [rest] : []
    this.#size = rest.length
    if (rest.length === 0) this.#need = 0
    return fired
  }

  /** `buf[off..]` holds `*<n>\r\n` then n times `$<len>\r\n<bytes>\r\n`: returns the end, or NEED_MORE. */
  #multibulk(buf: Buffer, off: number, args: Buffer[]): number {
    const nl = buf.indexOf(CRLF, off)
    if (nl < 0) {
      if (buf.length - off > MAX_INLINE) throw new ProtocolError('Protocol error: too big mbulk count string')
      return this.#wait(buf.length - off + 1)
    }
    const count = parseCount(buf, off + 1, nl)
    if (count === undefined || count > MAX_MULTIBULK) throw new ProtocolError('Protocol error: invalid multibulk length')
    let pos = nl + 2
    for (let i = 0; i < count; i++) {
      if (pos >= buf.length) return this.#wait(pos - off + 4)
      if (buf[pos] !== 0x24 /* '$' */) {
        throw new ProtocolError(`Protocol error: expected '$', got '${String.fromCharCode(buf[pos])}'`)
      }
      const hl = buf.indexOf(CRLF, pos)
      if (hl < 0) {
        if (buf.length - pos > MAX_INLINE) throw new ProtocolError('Protocol error: too big bulk count string')
        return this.#wait(buf.length - off + 1)
      }
      const len = parseCount(buf, pos + 1, hl)
      if (len === undefined || len > MAX_BULK) throw new ProtocolError('Protocol error: invalid bulk length')
      const start = hl + 2
      if (start + len + 2 > buf.length) return this.#wait(start + len + 2 - off)
      args.push(buf.subarray(start, start + len))
      pos = start + len + 2
    }
    this.#need = 0
    return pos // `*0` and `*-1` make no command, as in Redis
  }

  /** One line of space-separated arguments, ended by `\n` (a `\r` before it is dropped). */
  #inline(buf: Buffer, off: number, args: Buffer[]): number {
    const nl = buf.indexOf(0x0a, off)
    if (nl < 0) {
      if (buf.length - off > MAX_INLINE) throw new ProtocolError('Protocol error: too big inline request')
      return this.#wait(buf.length - off + 1)
    }
    const line = buf.toString('latin1', off, nl > off && buf[nl - 1] === 0x0d ? nl - 1 : nl)
    for (const a of splitInline(line)) args.push(Buffer.from(a, 'latin1'))
    this.#need = 0
    return nl + 1
  }

  /** Not a whole command yet: remember how many bytes (from its start) it needs at least. */
  #wait(need: number): number {
    this.#need = need
    return NEED_MORE
  }
}

/** The decimal integer in `buf[from..to]` (Redis' `string2ll`, no sign but `-1`), or undefined. */
export function parseCount(buf: Buffer, from: number, to: number): number | undefined {
  const s = buf.toString('latin1', from, to)
  if (!/^(-1|0|[1-9][0-9]{0,15})$/.test(s)) return undefined
  return Math.max(0, Number(s))
}

