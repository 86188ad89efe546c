// The connections of the RESP server (resp-server.ts runs it): the pipeline of each connection
// and the keyspace of this thread.
//
// The pipeline is Netty's shape for a protocol server:
//   RespDecoder (native)   bytes -> commands (Buffer[], views of the read: no copy per argument),
//                          parsed in Rust; a command reaches JS once, whole
//   CommandHandler         runs each command against the keyspace (keys kept as bytes) and
//                          collects its reply as a `Resp.*` value; in channelReadComplete it
//                          writes the batch's replies at once (`Resp.sequence`), which native
//                          code frames as RESP, and flushes.
// `--js-codec` uses the pure-JS decoder and encoder of resp-protocol.ts instead (an example of
// a JS decoder, and the same parser a node:net port runs in the benchmarks).
// Commands: PING ECHO GET SET (EX PX NX XX KEEPTTL GET) DEL EXISTS INCR DECR INCRBY DECRBY
// MGET MSET TTL PTTL DBSIZE FLUSHDB FLUSHALL SELECT COMMAND CONFIG GET QUIT.
//
// With `--threads N` every worker thread imports this module and runs `childHandler` for the
// connections of its loop; module state (the Store) is then per thread: each worker has its
// own keyspace (see resp-server.ts). The wire format is in resp-protocol.ts.
// Buffer imported, not the global: in Node the global `Buffer` is a getter, called on each use.
import { Buffer } from 'node:buffer'
import { type Channel, type ChannelHandler, type ChannelHandlerContext, Resp, RespDecoder as NativeRespDecoder, type RespReply, type ScheduledTask } from 'netloop'
import { NOT_INTEGER, OK, PONG, ProtocolError, Reply, ReplyError, RespDecoder, SYNTAX, Simple, err, respEncoder } from './resp-protocol'
import { addIdleTimeout, idleSeconds } from './lib/idle'
import { Store } from './resp-store'
import { addWorkerProxyProtocol } from './lib/proxy'
import { addWorkerTls } from './lib/tls'

// Read once: run with tsx (`npm start`), every use of an import is a call of a getter whose
// keyed load, shared by all of the module's exports, goes megamorphic (about 700 instructions
// per GET for these two on the reply path; a bundle, as the benchmark runs, has no getters).
const OK_REPLY = OK
const PONG_REPLY = PONG

/** Seconds without traffic before a connection is closed (`--idle`; workers get it from the main thread). */
export const IDLE_DEFAULT = 300
const idle = idleSeconds(IDLE_DEFAULT)

// ---------------------------------------------------------------------------------------------
// Values as integers (the keyspace itself is in resp-store.ts)

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** Redis' strict integer parse (`string2ll`): no spaces, no '+', no leading zeros, int64. */
function toInt64(b: Buffer | string): bigint | undefined {
  const s = typeof b === 'string' ? b : b.toString('latin1')
  if (!/^-?(0|[1-9][0-9]*)$/.test(s) || s === '-0' || s.length > 20) return undefined
  const v = BigInt(s)
  return v < INT64_MIN || v > INT64_MAX ? undefined : v
}

// ---------------------------------------------------------------------------------------------
// Commands

type Command = (args: Buffer[], store: Store) => Reply
/** A command: its name in lower case, Redis' arity (n = exactly n arguments with the name, -n = at least n). */
interface Def {
  name: string
  arity: number
  run: Command
}
/** The commands by the hash of their name (any case): found from the name's bytes, without a string per command. */
const COMMANDS = new Map<number, Def>()
const def = (name: string, arity: number, run: Command) => {
  const h = nameHash(Buffer.from(name))
  if (COMMANDS.has(h)) throw new Error(`command name hash collision: ${name}`)
  COMMANDS.set(h, { name, arity, run })
}
/** An argument as text (option names, messages): keys stay bytes. */
const text = (b: Buffer) => b.toString('latin1')

/** FNV-1a over the name's bytes with ASCII letters in lower case. */
function nameHash(b: Uint8Array): number {
  let h = 0x811c9dc5
  for (let i = 0; i < b.length; i++) {
    const c = b[i]
    h = Math.imul(h ^ (c >= 65 && c <= 90 ? c | 32 : c), 0x01000193)
  }
  return h
}

/** Whether `b` is `d`'s name in any case. */
function names(b: Buffer, d: Def): boolean {
  const name = d.name
  if (name.length !== b.length) return false
  for (let i = 0; i < b.length; i++) {
    const c = b[i]
    if ((c >= 65 && c <= 90 ? c | 32 : c) !== name.charCodeAt(i)) return false
  }
  return true
}

/** The command found last: a pipeline mostly repeats one (checked first, without hash or Map). */
let lastDef: Def | undefined

/** The command `b` names, compared case-insensitively as Redis does, or undefined. */
function lookup(b: Buffer): Def | undefined {
  if (lastDef !== undefined && names(b, lastDef)) return lastDef
  if (b.length > 16) return undefined // longer than any name
  const d = COMMANDS.get(nameHash(b))
  if (d === undefined || !names(b, d)) return undefined
  lastDef = d
  return d
}

const CONFIG: Record<string, string> = {
  save: '',
  appendonly: 'no',
  databases: '1',
  maxmemory: '0',
}

def('quit', -1, () => OK_REPLY) // answered by the handler, which then closes the connection
def('ping', -1, (a) => (a.length > 2 ? err("ERR wrong number of arguments for 'ping' command") : a.length === 2 ? a[1] : PONG_REPLY))
def('echo', 2, (a) => a[1])
def('get', 2, (a, s) => s.lend(s.get(a[1])))
def('set', -3, setCommand)
def('del', -2, (a, s) => a.slice(1).reduce((n, k) => n + (s.delete(k) ? 1 : 0), 0))
def('exists', -2, (a, s) => a.slice(1).reduce((n, k) => n + (s.get(k) ? 1 : 0), 0))
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
def('mget', -2, (a, s) => a.slice(1).map((k) => s.lend(s.get(k))))
def('mset', -3, (a, s) => {
  if (a.length % 2 === 0) return err("ERR wrong number of arguments for 'mset' command")
  for (let i = 1; i < a.length; i += 2) s.set(a[i], a[i + 1], 0)
  return OK_REPLY
})
def('ttl', 2, (a, s) => ttl(s, a[1], 1000))
def('pttl', 2, (a, s) => ttl(s, a[1], 1))
def('dbsize', 1, (_, s) => s.size)
def('flushdb', -1, (_, s) => (s.clear(), OK_REPLY))
def('flushall', -1, (_, s) => (s.clear(), OK_REPLY))
def('select', 2, (a) => (toInt64(a[1]) === 0n ? OK_REPLY : err('ERR DB index is out of range')))
// redis-cli asks for COMMAND DOCS at start (hints): an empty array means "none".
def('command', -1, () => [])
def('config', -2, (a) => {
  const sub = text(a[1]).toLowerCase()
  if (sub !== 'get') return err(`ERR unknown subcommand '${text(a[1])}'. Try CONFIG HELP.`)
  if (a.length < 3) return err("ERR wrong number of arguments for 'config|get' command")
  // redis-benchmark asks for `save` and `appendonly` before it starts.
  const out: Reply[] = []
  for (const p of a.slice(2)) {
    const re = new RegExp(`^${text(p).toLowerCase().replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`)
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
    const opt = text(a[i]).toUpperCase()
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
  const k = a[1]
  const old = s.get(k)
  if ((nx && old) || (xx && !old)) return get ? s.lend(old) : null
  const previous = get ? s.lend(old) : OK_REPLY // before `set` updates `old` in place
  s.set(k, a[2], keepTtl && old ? old.expiresAt : expiresAt, old)
  return previous
}

function incrBy(s: Store, k: Buffer, by: bigint): Reply {
  const e = s.get(k)
  const cur = e ? toInt64(e.value) : 0n
  if (cur === undefined) return NOT_INTEGER
  const next = cur + by
  if (next < INT64_MIN || next > INT64_MAX) return err('ERR increment or decrement would overflow')
  s.set(k, Buffer.from(next.toString()), e?.expiresAt ?? 0, e)
  return next
}

function ttl(s: Store, k: Buffer, unit: number): Reply {
  const e = s.get(k)
  if (!e) return -2
  if (e.expiresAt === 0) return -1
  return Math.round((e.expiresAt - Date.now()) / unit)
}

/** Redis' text for an unknown command, so redis-cli shows the same line. */
function unknownCommand(args: Buffer[]): ReplyError {
  let rest = ''
  for (let i = 1; i < args.length && rest.length < 128; i++) rest += `'${text(args[i]).slice(0, 128 - rest.length)}' `
  return err(`ERR unknown command '${text(args[0]).slice(0, 128)}', with args beginning with: ${rest}`)
}

const QUIET_ERRORS = new Set(['ERR_CHANNEL_CLOSED', 'ECONNRESET', 'EPIPE'])

/** `--js-codec`: the pure-JS decoder and encoder (resp-protocol.ts) instead of the native codec. */
const JS_CODEC = process.argv.includes('--js-codec') || (globalThis as { process?: NodeJS.Process }).process?.env.NETLOOP_RESP_JS_CODEC === '1'

// Read once: the library's exports are getters (a call per use on the reply path).
const NATIVE_OK = Resp.OK
const NATIVE_PONG = Resp.PONG
const NATIVE_NULL = Resp.nullBulk()
const bulk = Resp.bulk
const integer = Resp.integer

/** A reply of the command table as a natively framed `Resp` value. */
function toResp(r: Reply): RespReply {
  if (r === OK_REPLY) return NATIVE_OK
  if (r === PONG_REPLY) return NATIVE_PONG
  if (r === null) return NATIVE_NULL
  if (Buffer.isBuffer(r) || typeof r === 'string') return bulk(r)
  if (typeof r === 'number' || typeof r === 'bigint') return integer(r)
  if (r instanceof Simple) return Resp.simple(r.bytes.subarray(1, r.bytes.length - 2).toString('latin1'))
  if (r instanceof ReplyError) return Resp.error(r.message)
  return Resp.array(r.map(toResp))
}

/** Collected replies of about this many bytes are written at once, not at the batch's end. */
const WRITE_AT = 16 * 1024

/** About the bytes of `r` (its payloads; enough to decide when to write). */
function replySize(r: Reply): number {
  if (Buffer.isBuffer(r) || typeof r === 'string') return r.length + 16
  if (Array.isArray(r)) {
    let n = 16
    for (const i of r) n += replySize(i)
    return n
  }
  return 16
}

/**
 * Runs each command and collects its reply; writes the replies of a read batch at once, as a
 * `Resp.sequence` (`--js-codec`: one write each), and flushes, so a pipeline of N commands
 * costs one write to the socket (redis-server likewise gathers a client's replies in its
 * reply buffer and writes them when the event loop iteration ends).
 *
 * Replies collected past `WRITE_AT` bytes are written at once (flushed at the batch's end):
 * a write is what makes the channel unwritable once the replies pass the high water mark,
 * and then the native decoder hands over no further command of the batch (it takes them back
 * and delivers them once the client has read): a client pipelining GETs of a large value
 * without reading costs the server about the high water mark, not a reply per command it
 * sent (__test__/examples-backpressure.spec.ts).
 */
class CommandHandler implements ChannelHandler {
  /** Plain, not `#private`: read once per command, and a private field is a keyed load. */
  quitting = false
  /** The replies of this read batch, not written yet. */
  replies: RespReply[] = []
  /** About the bytes of `replies`. */
  collected = 0
  constructor(readonly store: Store) {}

  /** Writes the collected replies (not flushed). */
  writeReplies(ctx: ChannelHandlerContext) {
    const r = this.replies
    if (r.length === 0) return
    this.replies = []
    this.collected = 0
    ctx.write(r.length === 1 ? r[0] : Resp.sequence(r))
  }

  channelRead(ctx: ChannelHandlerContext, args: Buffer[]) {
    if (this.quitting) return // what came after QUIT is dropped
    const cmd = lookup(args[0])
    if (cmd?.name === 'quit') {
      this.quitting = true
      this.writeReplies(ctx)
      ctx.writeAndFlush(JS_CODEC ? OK_REPLY : NATIVE_OK, ctx.newPromise()).addListener(() => ctx.close())
      return
    }
    let reply: Reply
    if (!cmd) reply = unknownCommand(args)
    else if (cmd.arity > 0 ? args.length !== cmd.arity : args.length < -cmd.arity) {
      reply = err(`ERR wrong number of arguments for '${cmd.name}' command`)
    } else reply = cmd.run(args, this.store)
    if (JS_CODEC) ctx.write(reply)
    else if (reply === OK_REPLY || reply === PONG_REPLY) {
      // The constant replies first: no conversion, no size walk.
      this.replies.push(reply === OK_REPLY ? NATIVE_OK : NATIVE_PONG)
      if ((this.collected += 16) >= WRITE_AT) this.writeReplies(ctx)
    } else {
      this.replies.push(toResp(reply))
      if ((this.collected += replySize(reply)) >= WRITE_AT) this.writeReplies(ctx)
    }
  }

  channelReadComplete(ctx: ChannelHandlerContext) {
    this.writeReplies(ctx)
    ctx.flush()
  }

  exceptionCaught(ctx: ChannelHandlerContext, e: Error) {
    const code = (e as { code?: string }).code ?? ''
    if (e instanceof ProtocolError || code.startsWith('ERR_RESP_')) {
      // As Redis: the replies so far, the error, then the connection closes.
      this.quitting = true
      this.writeReplies(ctx)
      const text = e instanceof ProtocolError ? `ERR ${e.message}` : `ERR Protocol error: ${e.message}`
      ctx.writeAndFlush(JS_CODEC ? err(text) : Resp.error(text), ctx.newPromise()).addListener(() => ctx.close())
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
  addWorkerTls(ch) // --tls --threads N: TLS first, from the main thread's context
  addWorkerProxyProtocol(ch) // --proxy-protocol --threads N: the PROXY header decoder before it
  sweep ??= ch.eventLoop.scheduleAtFixedRate(() => store.sweep(), 1000, 1000)
  if (JS_CODEC) ch.pipeline.addLast('decoder', new RespDecoder()).addLast('encoder', respEncoder)
  // A client that pipelines without reading its replies is held back by TCP, not by our memory
  // (pauseWhileUnwritable: the default for a server's channels, spelled out).
  else ch.pipeline.addLast('decoder', new NativeRespDecoder({ pauseWhileUnwritable: true }))
  ch.pipeline.addLast('commands', new CommandHandler(store))
  addIdleTimeout(ch, idle, 'reads') // a request/response server: the peer's silence is idleness
}

