/**
 * permessage-deflate's server side of the negotiation (RFC 7692 §5, §7.1) in JS, for the
 * handshake `WebSocketServer.handleUpgrade` answers itself: the same rules as the native
 * handshake's (crates/ws/src/extension.rs, `server_negotiate`), so both paths agree on what
 * they accept. The first valid `permessage-deflate` offer this end can honour is answered;
 * invalid ones (an unknown or repeated parameter, a value where none is allowed, window bits
 * outside 8..15 or with a leading zero) are declined and the next is tried.
 */

/** The configuration as `deflateParams` (src/ws.ts) makes it: on, threshold, the two flags, the two windows. */
type Config = readonly number[]

interface Offer {
  sctx: boolean
  cctx: boolean
  sbits?: number
  /** null: present without a value. */
  cbits?: number | null
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

function bits(v: string): number | undefined {
  if (!/^[1-9][0-9]?$/.test(v)) return undefined
  const n = Number(v)
  return n >= 8 && n <= 15 ? n : undefined
}

/** One element's parameters, or undefined if it breaks RFC 7692 §7.1. */
function parse(params: string[]): Offer | undefined {
  const o: Offer = { sctx: false, cctx: false }
  const seen = new Set<string>()
  for (const raw of params) {
    const eq = raw.indexOf('=')
    const name = (eq < 0 ? raw : raw.slice(0, eq)).trim().toLowerCase()
    let value = eq < 0 ? undefined : raw.slice(eq + 1).trim()
    if (value !== undefined && value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
    if (seen.has(name) || (value !== undefined && !TOKEN.test(value))) return undefined
    seen.add(name)
    if (name === 'server_no_context_takeover' && value === undefined) o.sctx = true
    else if (name === 'client_no_context_takeover' && value === undefined) o.cctx = true
    else if (name === 'server_max_window_bits' && value !== undefined && bits(value) !== undefined) o.sbits = bits(value)
    else if (name === 'client_max_window_bits' && value === undefined) o.cbits = null
    else if (name === 'client_max_window_bits' && value !== undefined && bits(value) !== undefined) o.cbits = bits(value)
    else return undefined
  }
  return o
}

/**
 * The answer to `header` (the request's `Sec-WebSocket-Extensions`) under `config`: the
 * response's value and the agreed parameters (server and client no context takeover as 0/1,
 * server and client window bits), or undefined (the connection goes uncompressed).
 */
export function negotiateDeflate(config: Config, header: string | undefined): { response: string; agreed: number[] } | undefined {
  if (config[0] !== 1 || header === undefined) return undefined
  const [, , cfgSctx, cfgCctx, cfgSbits, cfgCbits] = config
  for (const element of header.split(',')) {
    const [name, ...params] = element.split(';')
    if (name.trim().toLowerCase() !== 'permessage-deflate') continue
    const o = parse(params)
    if (o === undefined) continue
    const serverBits = o.sbits !== undefined ? Math.min(o.sbits, cfgSbits) : cfgSbits < 15 ? cfgSbits : undefined
    let clientBits: number | undefined
    if (o.cbits === undefined) {
      if (cfgCbits < 15) continue // the client's window could not be limited
    } else {
      const b = o.cbits === null ? cfgCbits : Math.min(o.cbits, cfgCbits)
      if (b < 15 || o.cbits !== null) clientBits = b
    }
    const sctx = o.sctx || cfgSctx === 1
    const cctx = o.cctx || cfgCctx === 1
    let response = 'permessage-deflate'
    if (sctx) response += '; server_no_context_takeover'
    if (cctx) response += '; client_no_context_takeover'
    if (serverBits !== undefined) response += `; server_max_window_bits=${serverBits}`
    if (clientBits !== undefined) response += `; client_max_window_bits=${clientBits}`
    return { response, agreed: [sctx ? 1 : 0, cctx ? 1 : 0, serverBits ?? 15, clientBits ?? (o.cbits ?? 15)] }
  }
  return undefined
}
