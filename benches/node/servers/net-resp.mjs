// node:net RESP2 server for benches/node/channels-vs-net.mjs: a port of examples/resp-server.ts
// to node:net with the same request decoder (cumulation across reads, multibulk and inline),
// the same reply encoder and the same commands and store (this file's middle part is that
// example's code, from examples/resp-protocol.ts, resp-store.ts and resp-handlers.ts, with the
// types stripped); only the transport differs. Each 'data' event is
// decoded, every command's reply is written, and the replies of one event leave in one write
// (cork/uncork), as the example writes replies and flushes once per read batch. Buffer is
// imported from node:buffer as in the example (the global is a getter). Keep the middle part in
// step with the example's store and commands: a store speed-up there must reach this port too.
//
//   node net-resp.mjs      prints its port (127.0.0.1, a free one) on stdout
import { Buffer } from 'node:buffer'
import net from 'node:net'
import { exitOnTerm, ready } from './common.mjs'

// ---- from examples/resp-server.ts (types stripped) ------------------------------------------
class Simple {
  bytes;
  constructor(text) {
    this.bytes = Buffer.from(`+${text}\r
`, "latin1");
  }
}
class ReplyError {
  constructor(message) {
    this.message = message;
  }
  message;
}
const OK = new Simple("OK");
const PONG = new Simple("PONG");
const err = (message) => new ReplyError(message);
const NOT_INTEGER = err("ERR value is not an integer or out of range");
const SYNTAX = err("ERR syntax error");
const CRLF = Buffer.from("\r\n");
const NIL = Buffer.from("$-1\r\n");
function encode(reply, out) {
  if (reply instanceof Simple) out.push(reply.bytes);
  else if (reply instanceof ReplyError) out.push(Buffer.from(`-${reply.message.replace(/[\r\n]/g, " ")}\r
`, "latin1"));
  else if (reply === null) out.push(NIL);
  else if (typeof reply === "number" || typeof reply === "bigint") out.push(Buffer.from(`:${reply}\r
`));
  else if (Array.isArray(reply)) {
    out.push(Buffer.from(`*${reply.length}\r
`));
    for (const r of reply) encode(r, out);
  } else {
    const b = typeof reply === "string" ? Buffer.from(reply) : reply;
    out.push(Buffer.from(`$${b.length}\r
`), b, CRLF);
  }
}
class ProtocolError extends Error {
}
const MAX_INLINE = 64 * 1024;
const MAX_MULTIBULK = 1024 * 1024;
const MAX_BULK = 512 * 1024 * 1024;
const NEED_MORE = -1;
function splitInline(line) {
  const args = [];
  let i = 0;
  const n = line.length;
  for (; ; ) {
    while (i < n && /\s/.test(line[i])) i++;
    if (i >= n) return args;
    let cur = "";
    const q = line[i] === '"' || line[i] === "'" ? line[i++] : "";
    for (; ; ) {
      if (i >= n) {
        if (q) throw new ProtocolError("Protocol error: unbalanced quotes in request");
        break;
      }
      const c = line[i];
      if (!q && /\s/.test(c)) break;
      if (q && c === q) {
        i++;
        if (i < n && !/\s/.test(line[i])) throw new ProtocolError("Protocol error: unbalanced quotes in request");
        break;
      }
      if (q === '"' && c === "\\" && i + 1 < n) {
        const e = line[++i];
        if (e === "x" && /^[0-9a-fA-F]{2}$/.test(line.slice(i + 1, i + 3))) {
          cur += String.fromCharCode(parseInt(line.slice(i + 1, i + 3), 16));
          i += 2;
        } else cur += { n: "\n", r: "\r", t: "	", b: "\b", a: "\x07" }[e] ?? e;
      } else if (q === "'" && c === "\\" && line[i + 1] === "'") {
        cur += "'";
        i++;
      } else cur += c;
      i++;
    }
    args.push(cur);
  }
}
class RespDecoder {
  #chunks = [];
  #size = 0;
  /** Bytes the command at the front needs, once known: fewer buffered means don't parse yet. */
  #need = 0;
  #failed = false;
  channelRead(ctx, msg) {
    if (this.#failed) return;
    this.#chunks.push(msg);
    this.#size += msg.length;
    if (this.#size < this.#need) return;
    const buf = this.#chunks.length === 1 ? this.#chunks[0] : Buffer.concat(this.#chunks, this.#size);
    let off = 0;
    try {
      while (off < buf.length) {
        const args = [];
        const end = buf[off] === 42 ? this.#multibulk(buf, off, args) : this.#inline(buf, off, args);
        if (end === NEED_MORE) break;
        off = end;
        if (args.length > 0) ctx.fireChannelRead(args);
      }
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      this.#failed = true;
      this.#chunks = [];
      this.#size = 0;
      ctx.fireExceptionCaught(e);
      return;
    }
    const rest = buf.subarray(off);
    this.#chunks = rest.length > 0 ? [rest] : [];
    this.#size = rest.length;
    if (rest.length === 0) this.#need = 0;
  }
  /** `buf[off..]` holds `*<n>\r\n` then n times `$<len>\r\n<bytes>\r\n`: returns the end, or NEED_MORE. */
  #multibulk(buf, off, args) {
    const nl = buf.indexOf(CRLF, off);
    if (nl < 0) {
      if (buf.length - off > MAX_INLINE) throw new ProtocolError("Protocol error: too big mbulk count string");
      return this.#wait(buf.length - off + 1);
    }
    const count = parseCount(buf, off + 1, nl);
    if (count === void 0 || count > MAX_MULTIBULK) throw new ProtocolError("Protocol error: invalid multibulk length");
    let pos = nl + 2;
    for (let i = 0; i < count; i++) {
      if (pos >= buf.length) return this.#wait(pos - off + 4);
      if (buf[pos] !== 36) {
        throw new ProtocolError(`Protocol error: expected '$', got '${String.fromCharCode(buf[pos])}'`);
      }
      const hl = buf.indexOf(CRLF, pos);
      if (hl < 0) {
        if (buf.length - pos > MAX_INLINE) throw new ProtocolError("Protocol error: too big bulk count string");
        return this.#wait(buf.length - off + 1);
      }
      const len = parseCount(buf, pos + 1, hl);
      if (len === void 0 || len > MAX_BULK) throw new ProtocolError("Protocol error: invalid bulk length");
      const start = hl + 2;
      if (start + len + 2 > buf.length) return this.#wait(start + len + 2 - off);
      args.push(buf.subarray(start, start + len));
      pos = start + len + 2;
    }
    this.#need = 0;
    return pos;
  }
  /** One line of space-separated arguments, ended by `\n` (a `\r` before it is dropped). */
  #inline(buf, off, args) {
    const nl = buf.indexOf(10, off);
    if (nl < 0) {
      if (buf.length - off > MAX_INLINE) throw new ProtocolError("Protocol error: too big inline request");
      return this.#wait(buf.length - off + 1);
    }
    const line = buf.toString("latin1", off, nl > off && buf[nl - 1] === 13 ? nl - 1 : nl);
    for (const a of splitInline(line)) args.push(Buffer.from(a, "latin1"));
    this.#need = 0;
    return nl + 1;
  }
  /** Not a whole command yet: remember how many bytes (from its start) it needs at least. */
  #wait(need) {
    this.#need = need;
    return NEED_MORE;
  }
}
function parseCount(buf, from, to) {
  const s = buf.toString("latin1", from, to);
  if (!/^(-1|0|[1-9][0-9]{0,15})$/.test(s)) return void 0;
  return Math.max(0, Number(s));
}
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
function toInt64(b) {
  const s = typeof b === "string" ? b : b.toString("latin1");
  if (!/^-?(0|[1-9][0-9]*)$/.test(s) || s === "-0" || s.length > 20) return void 0;
  const v = BigInt(s);
  return v < INT64_MIN || v > INT64_MAX ? void 0 : v;
}
function ownCopy(b) {
  const n = b.length;
  const copy = n <= 64 ? Buffer.alloc(n) : Buffer.allocUnsafeSlow(n);
  copy.set(b);
  return copy;
}
function overwrite(to, from) {
  const n = from.length;
  if (n > 32) to.set(from);
  else for (let i = 0; i < n; i++) to[i] = from[i];
}
function keyHash(b) {
  let h = 2166136261;
  for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i], 16777619);
  return h & 1073741823;
}
function sameBytes(a, b) {
  const n = a.length;
  if (n !== b.length) return false;
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}
class Store {
  buckets = /* @__PURE__ */ new Map();
  size = 0;
  /** Entries with an expiry, for the periodic sweep. */
  volatile = /* @__PURE__ */ new Set();
  /** The live entry of `key`, without the expiry check. */
  #find(key) {
    let e = this.buckets.get(keyHash(key));
    while (e !== void 0 && !sameBytes(e.key, key)) e = e.next;
    return e;
  }
  get(key) {
    const e = this.#find(key);
    if (e !== void 0 && e.expiresAt !== 0 && e.expiresAt <= Date.now()) {
      this.#remove(e);
      return void 0;
    }
    return e;
  }
  /** `live`: the key's entry as `get` just returned it (updated in place: no lookup). */
  lend(e) {
    if (e === void 0) return null;
    e.lent = true;
    return e.value;
  }
  set(key, value, expiresAt, live) {
    let e = live ?? this.#find(key);
    if (e !== void 0) {
      if (!e.lent && e.value.length === value.length) overwrite(e.value, value);
      else {
        e.value = ownCopy(value);
        e.lent = false;
      }
      e.expiresAt = expiresAt;
    } else {
      const h = keyHash(key);
      e = { key: ownCopy(key), value: ownCopy(value), expiresAt, next: this.buckets.get(h), live: true, lent: false };
      this.buckets.set(h, e);
      this.size++;
    }
    if (expiresAt !== 0) this.volatile.add(e);
    else if (this.volatile.size !== 0) this.volatile.delete(e);
  }
  delete(key) {
    const e = this.get(key);
    if (e === void 0) return false;
    this.#remove(e);
    return true;
  }
  #remove(e) {
    const h = keyHash(e.key);
    const first = this.buckets.get(h);
    if (first === e) {
      if (e.next === void 0) this.buckets.delete(h);
      else this.buckets.set(h, e.next);
    } else {
      let p = first;
      while (p !== void 0 && p.next !== e) p = p.next;
      if (p !== void 0) p.next = e.next;
    }
    e.live = false;
    this.volatile.delete(e);
    this.size--;
  }
  clear() {
    this.buckets.clear();
    this.volatile.clear();
    this.size = 0;
  }
  /** Drops expired keys (run periodically on the loop, as Redis' active expiry). */
  sweep() {
    const now = Date.now();
    for (const e of this.volatile) {
      if (!e.live) this.volatile.delete(e);
      else if (e.expiresAt !== 0 && e.expiresAt <= now) this.#remove(e);
    }
  }
}
const COMMANDS = /* @__PURE__ */ new Map();
const def = (name, arity, run) => {
  const h = nameHash(Buffer.from(name));
  if (COMMANDS.has(h)) throw new Error(`command name hash collision: ${name}`);
  COMMANDS.set(h, { name, arity, run });
};
const text = (b) => b.toString("latin1");
function nameHash(b) {
  let h = 2166136261;
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    h = Math.imul(h ^ (c >= 65 && c <= 90 ? c | 32 : c), 16777619);
  }
  return h;
}
function names(b, d) {
  const name = d.name;
  if (name.length !== b.length) return false;
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if ((c >= 65 && c <= 90 ? c | 32 : c) !== name.charCodeAt(i)) return false;
  }
  return true;
}
let lastDef;
function lookup(b) {
  if (lastDef !== void 0 && names(b, lastDef)) return lastDef;
  if (b.length > 16) return void 0;
  const d = COMMANDS.get(nameHash(b));
  if (d === void 0 || !names(b, d)) return void 0;
  lastDef = d;
  return d;
}
const CONFIG = {
  save: "",
  appendonly: "no",
  databases: "1",
  maxmemory: "0"
};
def("quit", -1, () => OK);
def("ping", -1, (a) => a.length > 2 ? err("ERR wrong number of arguments for 'ping' command") : a.length === 2 ? a[1] : PONG);
def("echo", 2, (a) => a[1]);
def("get", 2, (a, s) => s.lend(s.get(a[1])));
def("set", -3, setCommand);
def("del", -2, (a, s) => a.slice(1).reduce((n, k) => n + (s.delete(k) ? 1 : 0), 0));
def("exists", -2, (a, s) => a.slice(1).reduce((n, k) => n + (s.get(k) ? 1 : 0), 0));
def("incr", 2, (a, s) => incrBy(s, a[1], 1n));
def("decr", 2, (a, s) => incrBy(s, a[1], -1n));
def("incrby", 3, (a, s) => {
  const by = toInt64(a[2]);
  return by === void 0 ? NOT_INTEGER : incrBy(s, a[1], by);
});
def("decrby", 3, (a, s) => {
  const by = toInt64(a[2]);
  return by === void 0 ? NOT_INTEGER : incrBy(s, a[1], -by);
});
def("mget", -2, (a, s) => a.slice(1).map((k) => s.lend(s.get(k))));
def("mset", -3, (a, s) => {
  if (a.length % 2 === 0) return err("ERR wrong number of arguments for 'mset' command");
  for (let i = 1; i < a.length; i += 2) s.set(a[i], a[i + 1], 0);
  return OK;
});
def("ttl", 2, (a, s) => ttl(s, a[1], 1e3));
def("pttl", 2, (a, s) => ttl(s, a[1], 1));
def("dbsize", 1, (_, s) => s.size);
def("flushdb", -1, (_, s) => (s.clear(), OK));
def("flushall", -1, (_, s) => (s.clear(), OK));
def("select", 2, (a) => toInt64(a[1]) === 0n ? OK : err("ERR DB index is out of range"));
def("command", -1, () => []);
def("config", -2, (a) => {
  const sub = text(a[1]).toLowerCase();
  if (sub !== "get") return err(`ERR unknown subcommand '${text(a[1])}'. Try CONFIG HELP.`);
  if (a.length < 3) return err("ERR wrong number of arguments for 'config|get' command");
  const out = [];
  for (const p of a.slice(2)) {
    const re = new RegExp(`^${text(p).toLowerCase().replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`);
    for (const [name, value] of Object.entries(CONFIG)) if (re.test(name)) out.push(name, value);
  }
  return out;
});
function setCommand(a, s) {
  let expiresAt = 0;
  let nx = false;
  let xx = false;
  let keepTtl = false;
  let get = false;
  for (let i = 3; i < a.length; i++) {
    const opt = text(a[i]).toUpperCase();
    if ((opt === "EX" || opt === "PX" || opt === "EXAT" || opt === "PXAT") && i + 1 < a.length && !expiresAt && !keepTtl) {
      const n = toInt64(a[++i]);
      if (n === void 0) return NOT_INTEGER;
      if (n <= 0n) return err("ERR invalid expire time in 'set' command");
      const ms = Number(n) * (opt === "EX" || opt === "EXAT" ? 1e3 : 1);
      expiresAt = opt.endsWith("AT") ? ms : Date.now() + ms;
    } else if (opt === "NX" && !xx) nx = true;
    else if (opt === "XX" && !nx) xx = true;
    else if (opt === "KEEPTTL" && !expiresAt) keepTtl = true;
    else if (opt === "GET") get = true;
    else return SYNTAX;
  }
  const k = a[1];
  const old = s.get(k);
  if (nx && old || xx && !old) return get ? s.lend(old) : null;
  const previous = get ? s.lend(old) : OK;
  s.set(k, a[2], keepTtl && old ? old.expiresAt : expiresAt, old);
  return previous;
}
function incrBy(s, k, by) {
  const e = s.get(k);
  const cur = e ? toInt64(e.value) : 0n;
  if (cur === void 0) return NOT_INTEGER;
  const next = cur + by;
  if (next < INT64_MIN || next > INT64_MAX) return err("ERR increment or decrement would overflow");
  s.set(k, Buffer.from(next.toString()), e?.expiresAt ?? 0, e);
  return next;
}
function ttl(s, k, unit) {
  const e = s.get(k);
  if (!e) return -2;
  if (e.expiresAt === 0) return -1;
  return Math.round((e.expiresAt - Date.now()) / unit);
}
function unknownCommand(args) {
  let rest = "";
  for (let i = 1; i < args.length && rest.length < 128; i++) rest += `'${text(args[i]).slice(0, 128 - rest.length)}' `;
  return err(`ERR unknown command '${text(args[0]).slice(0, 128)}', with args beginning with: ${rest}`);
}
// ---- end of the part from examples/resp-server.ts --------------------------------------------

/** Reply value -> bytes (what the example's respEncoder does). */
function replyBytes(msg) {
  if (msg instanceof Simple) return msg.bytes
  const out = []
  encode(msg, out)
  return out.length === 1 ? out[0] : Buffer.concat(out)
}

const store = new Store()
setInterval(() => store.sweep(), 1000).unref()

const server = net.createServer({ noDelay: true }, (socket) => {
  const decoder = new RespDecoder()
  let quitting = false
  // What the decoder calls (the example's ChannelHandlerContext, as far as it uses it).
  const ctx = {
    fireChannelRead(args) {
      if (quitting) return
      const cmd = lookup(args[0])
      if (cmd?.name === 'quit') {
        quitting = true
        socket.end(OK.bytes)
        return
      }
      let reply
      if (!cmd) reply = unknownCommand(args)
      else if (cmd.arity > 0 ? args.length !== cmd.arity : args.length < -cmd.arity) {
        reply = err(`ERR wrong number of arguments for '${cmd.name}' command`)
      } else reply = cmd.run(args, store)
      socket.write(replyBytes(reply))
    },
    fireExceptionCaught(e) {
      quitting = true
      socket.end(replyBytes(err(`ERR ${e.message}`)))
    },
  }
  socket.on('data', (chunk) => {
    socket.cork()
    decoder.channelRead(ctx, chunk)
    socket.uncork()
  })
  socket.on('error', () => {})
})
server.listen(0, '127.0.0.1', () => ready(server.address().port))
exitOnTerm()
