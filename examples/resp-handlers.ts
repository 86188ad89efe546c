// The connections of the RESP server (resp-server.ts runs it): the pipeline of each connection
// and the keyspace of this thread.
//
// The pipeline is Netty's shape for a protocol server:
//   RespDecoder (inbound)  bytes -> commands (Buffer[]), keeping a cumulation across reads
//   RespEncoder (outbound) reply values -> RESP bytes
//   CommandHandler         runs each command against a Map, writes the reply with ctx.write,
//                          and flushes once per read batch in channelReadComplete.
// Commands: PING ECHO GET SET (EX PX NX XX KEEPTTL GET) DEL EXISTS INCR DECR INCRBY DECRBY
// MGET MSET TTL PTTL DBSIZE FLUSHDB FLUSHALL SELECT COMMAND CONFIG GET QUIT.
//
// With `--threads N` every worker thread imports this module and runs `childHandler` for the
// connections of its loop; module state (the Store) is then per thread: each worker has its
// own keyspace (see resp-server.ts). This module imports only netloop's types: on a worker,
// netloop runs from its compiled index.js, and a runtime `import ... from '../index'` in a .ts
// module there would load the TypeScript sources as a second copy (see chat-room.ts).
import type { Channel, ChannelHandler, ChannelHandlerContext, ScheduledTask } from '../index'

// ---------------------------------------------------------------------------------------------
// Replies

/** A simple string reply (`+OK`). */
class Simple {
  readonly bytes: Buffer
  constructor(text: string) {
    this.bytes = Buffer.from(`+${text}\r\n`, 'latin1')
  }
}

/** An error reply (`-ERR ...`); Redis puts no CR or LF in one. */
class ReplyError {
  constructor(readonly message: string) {}
}

/** What a command returns: Buffer or string = bulk string, null = nil, number/bigint = integer. */
type Reply = Simple | ReplyError | Buffer | string | null | number | bigint | Reply[]

const OK = new Simple('OK')
const PONG = new Simple('PONG')
const err = (message: string) => new ReplyError(message)
const NOT_INTEGER = err('ERR value is not an integer or out of range')
const SYNTAX = err('ERR syntax error')

const CRLF = Buffer.from('\r\n')
const NIL = Buffer.from('$-1\r\n')

function encode(reply: Reply, out: Buffer[]): void {
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
const respEncoder: ChannelHandler = {
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
class ProtocolError extends Error {}

const MAX_INLINE = 64 * 1024
const MAX_MULTIBULK = 1024 * 1024
const MAX_BULK = 512 * 1024 * 1024
const NEED_MORE = -1

/** Splits an inline command as redis-cli does (`sdssplitargs`): spaces, "..." with escapes, '...'. */
function splitInline(line: string): string[] {
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
 */
class RespDecoder implements ChannelHandler {
  #chunks: Buffer[] = []
  #size = 0
  /** Bytes the command at the front needs, once known: fewer buffered means don't parse yet. */
  #need = 0
  #failed = false

  channelRead(ctx: ChannelHandlerContext, msg: Buffer) {
    if (this.#failed) return
    this.#chunks.push(msg)
    this.#size += msg.length
    if (this.#size < this.#need) return
    const buf = this.#chunks.length === 1 ? this.#chunks[0] : Buffer.concat(this.#chunks, this.#size)
    let off = 0
    try {
      while (off < buf.length) {
        const args: Buffer[] = []
        const end = buf[off] === 0x2a /* '*' */ ? this.#multibulk(buf, off, args) : this.#inline(buf, off, args)
        if (end === NEED_MORE) break
        off = end
        if (args.length > 0) ctx.fireChannelRead(args)
      }
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e
      this.#failed = true
      this.#chunks = []
      this.#size = 0
      ctx.fireExceptionCaught(e)
      return
    }
    const rest = buf.subarray(off)
    this.#chunks = rest.length > 0 ? [rest] : []
    this.#size = rest.length
    if (rest.length === 0) this.#need = 0
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
function parseCount(buf: Buffer, from: number, to: number): number | undefined {
  const s = buf.toString('latin1', from, to)
  if (!/^(-1|0|[1-9][0-9]{0,15})$/.test(s)) return undefined
  return Math.max(0, Number(s))
}

// ---------------------------------------------------------------------------------------------
// The data: a Map of strings, with optional expiry

interface Entry {
  value: Buffer
  /** ms since the epoch; 0 = never. */
  expiresAt: number
}

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** Redis' strict integer parse (`string2ll`): no spaces, no '+', no leading zeros, int64. */
function toInt64(b: Buffer | string): bigint | undefined {
  const s = typeof b === 'string' ? b : b.toString('latin1')
  if (!/^-?(0|[1-9][0-9]*)$/.test(s) || s === '-0' || s.length > 20) return undefined
  const v = BigInt(s)
  return v < INT64_MIN || v > INT64_MAX ? undefined : v
}

class Store {
  readonly map = new Map<string, Entry>()
  /** Keys with an expiry, for the periodic sweep. */
  readonly volatile = new Set<string>()

  get(key: string): Entry | undefined {
    const e = this.map.get(key)
    if (e && e.expiresAt !== 0 && e.expiresAt <= Date.now()) {
      this.delete(key)
      return undefined
    }
    return e
  }

  set(key: string, value: Buffer, expiresAt: number): void {
    // Copy: `value` is a view of the read buffer, which would stay alive with it.
    this.map.set(key, { value: Buffer.from(value), expiresAt })
    if (expiresAt !== 0) this.volatile.add(key)
    else this.volatile.delete(key)
  }

  delete(key: string): boolean {
    this.volatile.delete(key)
    return this.map.delete(key)
  }

  clear(): void {
    this.map.clear()
    this.volatile.clear()
  }

  /** Drops expired keys (run periodically on the loop, as Redis' active expiry). */
  sweep(): void {
    const now = Date.now()
    for (const key of this.volatile) {
      const e = this.map.get(key)
      if (!e || (e.expiresAt !== 0 && e.expiresAt <= now)) this.delete(key)
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Commands

type Command = (args: Buffer[], store: Store) => Reply
/** Redis' arity: n = exactly n arguments with the name, -n = at least n. */
const COMMANDS = new Map<string, [arity: number, run: Command]>()
const def = (name: string, arity: number, run: Command) => COMMANDS.set(name, [arity, run])
const key = (b: Buffer) => b.toString('latin1')

const CONFIG: Record<string, string> = {
  save: '',
  appendonly: 'no',
  databases: '1',
  maxmemory: '0',
}

def('ping', -1, (a) => (a.length > 2 ? err("ERR wrong number of arguments for 'ping' command") : a.length === 2 ? a[1] : PONG))
def('echo', 2, (a) => a[1])
def('get', 2, (a, s) => s.get(key(a[1]))?.value ?? null)
def('set', -3, setCommand)
def('del', -2, (a, s) => a.slice(1).reduce((n, k) => n + (s.get(key(k)) && s.delete(key(k)) ? 1 : 0), 0))
def('exists', -2, (a, s) => a.slice(1).reduce((n, k) => n + (s.get(key(k)) ? 1 : 0), 0))
def('incr', 2, (a, s) => incrBy(s, a[1], 1n))
def('decr', 2, (a, s) => incrBy(s, a[1], -1n))
def('incrby', 3, (a, s) => {
  const by = toInt64(a[2])
  return by === undefined ? NOT_INTEGER : incrBy(s, a[1], by)
})
def('decrby', 3, (a, s) => {
  const by = toInt64(a[2])
  return by === undefined ? NOT_INTEGER : incrBy(s, a[1], -by)
})
def('mget', -2, (a, s) => a.slice(1).map((k) => s.get(key(k))?.value ?? null))
def('mset', -3, (a, s) => {
  if (a.length % 2 === 0) return err("ERR wrong number of arguments for 'mset' command")
  for (let i = 1; i < a.length; i += 2) s.set(key(a[i]), a[i + 1], 0)
  return OK
})
def('ttl', 2, (a, s) => ttl(s, a[1], 1000))
def('pttl', 2, (a, s) => ttl(s, a[1], 1))
def('dbsize', 1, (_, s) => s.map.size)
def('flushdb', -1, (_, s) => (s.clear(), OK))
def('flushall', -1, (_, s) => (s.clear(), OK))
def('select', 2, (a) => (toInt64(a[1]) === 0n ? OK : err('ERR DB index is out of range')))
// redis-cli asks for COMMAND DOCS at start (hints): an empty array means "none".
def('command', -1, () => [])
def('config', -2, (a) => {
  const sub = key(a[1]).toLowerCase()
  if (sub !== 'get') return err(`ERR unknown subcommand '${key(a[1])}'. Try CONFIG HELP.`)
  if (a.length < 3) return err("ERR wrong number of arguments for 'config|get' command")
  // redis-benchmark asks for `save` and `appendonly` before it starts.
  const out: Reply[] = []
  for (const p of a.slice(2)) {
    const re = new RegExp(`^${key(p).toLowerCase().replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`)
    for (const [name, value] of Object.entries(CONFIG)) if (re.test(name)) out.push(name, value)
  }
  return out
})

function setCommand(a: Buffer[], s: Store): Reply {
  let expiresAt = 0
  let nx = false
  let xx = false
  let keepTtl = false
  let get = false
  for (let i = 3; i < a.length; i++) {
    const opt = key(a[i]).toUpperCase()
    if ((opt === 'EX' || opt === 'PX' || opt === 'EXAT' || opt === 'PXAT') && i + 1 < a.length && !expiresAt && !keepTtl) {
      const n = toInt64(a[++i])
      if (n === undefined) return NOT_INTEGER
      if (n <= 0n) return err("ERR invalid expire time in 'set' command")
      const ms = Number(n) * (opt === 'EX' || opt === 'EXAT' ? 1000 : 1)
      expiresAt = opt.endsWith('AT') ? ms : Date.now() + ms
    } else if (opt === 'NX' && !xx) nx = true
    else if (opt === 'XX' && !nx) xx = true
    else if (opt === 'KEEPTTL' && !expiresAt) keepTtl = true
    else if (opt === 'GET') get = true
    else return SYNTAX
  }
  const k = key(a[1])
  const old = s.get(k)
  if ((nx && old) || (xx && !old)) return get ? (old?.value ?? null) : null
  s.set(k, a[2], keepTtl && old ? old.expiresAt : expiresAt)
  return get ? (old?.value ?? null) : OK
}

function incrBy(s: Store, k: Buffer, by: bigint): Reply {
  const e = s.get(key(k))
  const cur = e ? toInt64(e.value) : 0n
  if (cur === undefined) return NOT_INTEGER
  const next = cur + by
  if (next < INT64_MIN || next > INT64_MAX) return err('ERR increment or decrement would overflow')
  s.set(key(k), Buffer.from(next.toString()), e?.expiresAt ?? 0)
  return next
}

function ttl(s: Store, k: Buffer, unit: number): Reply {
  const e = s.get(key(k))
  if (!e) return -2
  if (e.expiresAt === 0) return -1
  return Math.round((e.expiresAt - Date.now()) / unit)
}

/** Redis' text for an unknown command, so redis-cli shows the same line. */
function unknownCommand(args: Buffer[]): ReplyError {
  let rest = ''
  for (let i = 1; i < args.length && rest.length < 128; i++) rest += `'${key(args[i]).slice(0, 128 - rest.length)}' `
  return err(`ERR unknown command '${key(args[0]).slice(0, 128)}', with args beginning with: ${rest}`)
}

const QUIET_ERRORS = new Set(['ERR_CHANNEL_CLOSED', 'ECONNRESET', 'EPIPE'])

/**
 * Runs each command and writes its reply (not flushed); flushes once per read batch, so a
 * pipeline of N commands costs one write to the socket.
 */
class CommandHandler implements ChannelHandler {
  #quitting = false
  constructor(readonly store: Store) {}

  channelRead(ctx: ChannelHandlerContext, args: Buffer[]) {
    if (this.#quitting) return // what came after QUIT is dropped
    const name = key(args[0]).toLowerCase()
    if (name === 'quit') {
      this.#quitting = true
      ctx.writeAndFlush(OK, ctx.newPromise()).addListener(() => ctx.close())
      return
    }
    const cmd = COMMANDS.get(name)
    let reply: Reply
    if (!cmd) reply = unknownCommand(args)
    else if (cmd[0] > 0 ? args.length !== cmd[0] : args.length < -cmd[0]) {
      reply = err(`ERR wrong number of arguments for '${name}' command`)
    } else reply = cmd[1](args, this.store)
    ctx.write(reply)
  }

  channelReadComplete(ctx: ChannelHandlerContext) {
    ctx.flush()
  }

  exceptionCaught(ctx: ChannelHandlerContext, e: Error) {
    if (e instanceof ProtocolError) {
      // As Redis: the replies so far, the error, then the connection closes.
      this.#quitting = true
      ctx.writeAndFlush(err(`ERR ${e.message}`), ctx.newPromise()).addListener(() => ctx.close())
      return
    }
    // A peer that goes away mid-reply is normal; anything else is worth a line.
    if (!QUIET_ERRORS.has((e as NodeJS.ErrnoException).code ?? '')) console.error(`resp-server: channel ${ctx.channel.id}: ${e.message}`)
    ctx.close()
  }
}

// ---------------------------------------------------------------------------------------------
// The connections of this thread

/** This thread's keyspace: with --threads N, one per worker thread. */
const store = new Store()
/** The expiry sweep, started on the loop of this thread's first connection. */
let sweep: ScheduledTask | undefined

/**
 * Sets up each connection's pipeline, on the loop that serves it: the main thread's loop, or
 * (--threads N) a worker's loop, where netloop's worker calls it for every connection.
 */
export function childHandler(ch: Channel): void {
  sweep ??= ch.eventLoop.scheduleAtFixedRate(() => store.sweep(), 1000, 1000)
  ch.pipeline
    .addLast('decoder', new RespDecoder())
    .addLast('encoder', respEncoder)
    .addLast('commands', new CommandHandler(store))
}
