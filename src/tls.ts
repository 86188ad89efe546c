/**
 * TLS: `SslContext` (a server's or a client's configuration, parsed once, shared by every
 * connection and every worker thread) and `SslHandler` (Netty's: a native handler at the front
 * of the pipeline that turns records into plaintext and back). Options use node:tls's names.
 *
 * ```ts
 * const tls = new SslContext({ isServer: true, cert, key, ALPNProtocols: ['http/1.1'] })
 * new ServerBootstrap().group(loop).childHandler((ch) => {
 *   ch.pipeline.addLast('tls', new SslHandler(tls)).addLast('app', handler)
 * })
 * ```
 */
import { isIP } from 'node:net'
import { native } from './binding'
import { Channel } from './channel'
import { NativeHandler } from './codecs'
import { NativeHandlerKind, ServerNameAnswer } from './protocol'
import { NetloopError, checkBoolean, checkInteger, fromNative, invalidArg, invalidArgType } from './errors'
import { type SNICallback, type SniOutcome, checkSniCallback, describeError, runSniCallback } from './tls-sni'
import { type PeerCertificate, type TlsInfo, tlsInfo } from './tls-info'

export type { SNICallback } from './tls-sni'
export type { PeerCertificate, TlsInfo } from './tls-info'

type Pem = string | Buffer | Array<string | Buffer>

/** A certificate chain and key (PEM) for one host name. */
export interface SslIdentity {
  cert: Pem
  key: string | Buffer
  /** A DER OCSP response for `cert`, stapled for clients that ask (see `ocspResponse`). */
  ocspResponse?: Buffer
}

/** node:tls's option names where they exist; Netty's defaults where they differ. */
export interface SslContextOptions {
  /** A server context (node:tls's `isServer`; default false: a client context). */
  isServer?: boolean
  /** PEM certificate chain, leaf first (a server's default certificate, or a client's for mTLS). */
  cert?: Pem
  /**
   * PEM private key of `cert` (RSA, ECDSA or Ed25519; PKCS#8, PKCS#1 or SEC1), or an
   * encrypted PKCS#8 key (`ENCRYPTED PRIVATE KEY`) with `passphrase`.
   */
  key?: string | Buffer
  /**
   * The passphrase of encrypted private keys (`key`, and the keys of `SNI` entries), as
   * node:tls's. OpenSSL's legacy encrypted PEM (`Proc-Type: 4,ENCRYPTED`) is refused with the
   * `openssl pkcs8 -topk8` command that converts it.
   */
  passphrase?: string
  /** Trusted CA certificates (PEM). Replaces the bundled Mozilla roots, as in node:tls. */
  ca?: Pem
  /**
   * Server: a DER OCSP response for `cert` (from its CA's responder, e.g. `openssl ocsp
   * -respout`), stapled to the handshake of clients that ask for one (`status_request`, as
   * browsers do), so they need not ask the CA. node:tls staples through its `'OCSPRequest'`
   * event; here it is part of the context: refresh it before it expires with `reload()`.
   */
  ocspResponse?: Buffer
  /** Also trust the operating system's roots (client). */
  useSystemCA?: boolean
  /** Server: certificates by host name (`'*.example.com'` matches one label); others get `cert`. */
  SNI?: Record<string, SslIdentity>
  /**
   * Server: chooses the context of each connection whose client names a server (node:tls's
   * `SNICallback`, asynchronous allowed); see the guide's TLS section. Such a context cannot be
   * shared with worker threads (make it in the worker's module).
   */
  SNICallback?: SNICallback
  /** Server: ask clients for a certificate (mTLS). */
  requestCert?: boolean
  /**
   * Fail the handshake on a certificate that does not verify (default true). A server with
   * `requestCert` and `rejectUnauthorized: false` accepts any client and reports `authorized`.
   */
  rejectUnauthorized?: boolean
  /** ALPN protocols in order of preference. */
  ALPNProtocols?: string[]
  /** Client: the name to send (SNI) and verify; default: the host given to `connect()`. */
  servername?: string
  /** Lowest version, `'TLSv1.2'` (default) or `'TLSv1.3'`. */
  minVersion?: 'TLSv1.2' | 'TLSv1.3'
  /** Highest version, `'TLSv1.3'` (default) or `'TLSv1.2'`. */
  maxVersion?: 'TLSv1.2' | 'TLSv1.3'
  /** Milliseconds allowed for a handshake (Netty's default 10000; 0: no limit). */
  handshakeTimeout?: number
  /** Server: sessions kept for resumption by id (default 1024; 0: none). */
  sessionCacheSize?: number
  /** Server: issue stateless session tickets (default true). */
  sessionTickets?: boolean
  /**
   * Server: 48 bytes that seal session tickets (node:tls's `ticketKeys`), so that servers given
   * the same bytes (other processes, other machines behind one load balancer) resume each
   * other's sessions; without it each context has keys of its own. Rotate them with
   * `reload()`. Only netloop servers open netloop's tickets.
   */
  ticketKeys?: Buffer
  /**
   * Cipher suites in order of preference, separated by `:`, by IANA or OpenSSL name
   * (`'TLS_AES_256_GCM_SHA384:ECDHE-RSA-AES256-GCM-SHA384'`). Default: AES-128-GCM, then
   * ChaCha20-Poly1305, then AES-256-GCM, for TLS 1.3 and for TLS 1.2 (ECDHE only). OpenSSL's
   * cipher-string language (`HIGH:!aNULL`) is not understood: an unknown name throws.
   */
  ciphers?: string
  /**
   * Server: pick the suite by this context's order (default **true**, unlike node:tls) rather
   * than by the client's.
   */
  honorCipherOrder?: boolean
  /** Key-exchange groups in order, separated by `:` (`'X25519:P-256'`; `P-384`), or `'auto'`. */
  ecdhCurve?: string
  /**
   * Certificate revocation lists (PEM) checked against the peer's certificate: a client's
   * server, or a server's clients (with `requestCert`). A peer certificate whose issuer has no
   * list here fails (`UNABLE_TO_GET_CRL`), as with node:tls.
   */
  crl?: Pem
  /**
   * Append every handshake's secrets to this file in the NSS key log format, so that Wireshark
   * can decrypt a capture (what node's `--tls-keylog` does). Debugging only.
   */
  keyLogFile?: string
  /**
   * Client: judges the server's identity once its chain verified (node:tls's
   * `checkServerIdentity`): return an `Error` to refuse the server, `undefined` to accept it.
   * It replaces the host-name check (call node's `tls.checkServerIdentity(hostname, cert)` in
   * it to keep that check and add yours, e.g. a pinned `fingerprint256`). Called on the thread
   * of the channel's loop before anything is written or delivered; not called for resumed
   * sessions. Such a context cannot be shared with worker threads.
   */
  checkServerIdentity?: (hostname: string, cert: PeerCertificate) => Error | undefined
}

/** What `SslContext` carries across a `worker_threads` boundary (structured clone keeps it). */
export interface SharedSslContext {
  readonly netloopSslContext: number
}

function pem(name: string, v: Pem | undefined): Buffer | undefined {
  if (v === undefined) return undefined
  const parts = Array.isArray(v) ? v : [v]
  const bufs = parts.map((p) => {
    if (typeof p === 'string') return Buffer.from(p)
    if (Buffer.isBuffer(p)) return p
    throw invalidArgType(name, 'string, Buffer or an array of them', p)
  })
  return Buffer.concat(bufs.flatMap((b) => [b, Buffer.from('\n')]))
}

function version(name: string, v: unknown): string | undefined {
  if (v === undefined) return undefined
  if (v !== 'TLSv1.2' && v !== 'TLSv1.3') {
    throw new NetloopError('ERR_TLS_INVALID_PROTOCOL_VERSION', `${String(v)} is not a supported ${name} (TLSv1.2 or TLSv1.3)`)
  }
  return v
}

function native_(o: SslContextOptions) {
  if (o === null || typeof o !== 'object') throw invalidArgType('options', 'object', o)
  for (const k of ['isServer', 'useSystemCA', 'requestCert', 'rejectUnauthorized', 'sessionTickets', 'honorCipherOrder'] as const) {
    if (o[k] !== undefined) checkBoolean(k, o[k])
  }
  if (o.ALPNProtocols !== undefined && (!Array.isArray(o.ALPNProtocols) || o.ALPNProtocols.some((p) => typeof p !== 'string' || p.length === 0 || p.length > 255))) {
    throw invalidArgType('ALPNProtocols', 'an array of non-empty strings', o.ALPNProtocols)
  }
  if (o.servername !== undefined && typeof o.servername !== 'string') throw invalidArgType('servername', 'string', o.servername)
  if (o.passphrase !== undefined && typeof o.passphrase !== 'string') throw invalidArgType('passphrase', 'string', o.passphrase)
  for (const k of ['ciphers', 'ecdhCurve', 'keyLogFile'] as const) {
    if (o[k] !== undefined && (typeof o[k] !== 'string' || o[k] === '')) throw invalidArgType(k, 'a non-empty string', o[k])
  }
  checkSniCallback(o.SNICallback)
  if (o.checkServerIdentity !== undefined && typeof o.checkServerIdentity !== 'function') {
    throw invalidArgType('checkServerIdentity', 'function', o.checkServerIdentity)
  }
  if (o.checkServerIdentity !== undefined && o.isServer) throw invalidArg('checkServerIdentity is an option of client contexts')
  if (o.SNICallback !== undefined && !o.isServer) throw invalidArg('SNICallback is an option of server contexts (isServer: true)')
  if (o.ticketKeys !== undefined && !o.isServer) throw invalidArg('ticketKeys is an option of server contexts (isServer: true)')
  if (o.ocspResponse !== undefined && !o.isServer) throw invalidArg('ocspResponse is an option of server contexts (isServer: true)')
  const sni = o.SNI === undefined ? undefined : Object.entries(o.SNI).map(([hostname, id]) => {
    if (id === null || typeof id !== 'object') throw invalidArgType(`SNI['${hostname}']`, 'object', id)
    return {
      hostname,
      cert: pem(`SNI['${hostname}'].cert`, id.cert)!,
      key: pem(`SNI['${hostname}'].key`, id.key)!,
      ocspResponse: der(`SNI['${hostname}'].ocspResponse`, id.ocspResponse),
    }
  })
  return {
    isServer: o.isServer ?? false,
    cert: pem('cert', o.cert),
    key: pem('key', o.key),
    ca: pem('ca', o.ca),
    systemRoots: o.useSystemCA,
    sni,
    requestCert: o.requestCert,
    rejectUnauthorized: o.rejectUnauthorized,
    alpnProtocols: o.ALPNProtocols,
    minVersion: version('minVersion', o.minVersion),
    maxVersion: version('maxVersion', o.maxVersion),
    servername: o.servername,
    sessionCacheSize: o.sessionCacheSize === undefined ? undefined : checkInteger('sessionCacheSize', o.sessionCacheSize, 0, 1 << 24),
    sessionTickets: o.sessionTickets,
    handshakeTimeout: o.handshakeTimeout === undefined ? undefined : checkInteger('handshakeTimeout', o.handshakeTimeout, 0, 0x7fffffff),
    sniCallback: o.SNICallback !== undefined,
    ciphers: o.ciphers?.split(':'),
    honorCipherOrder: o.honorCipherOrder,
    groups: o.ecdhCurve?.split(':'),
    crl: pem('crl', o.crl),
    keyLogFile: o.keyLogFile,
    passphrase: o.passphrase,
    checkServerIdentity: o.checkServerIdentity !== undefined,
    ticketKeys: ticketKeys(o.ticketKeys),
    ocspResponse: der('ocspResponse', o.ocspResponse),
  }
}

function der(name: string, v: unknown): Buffer | undefined {
  if (v === undefined) return undefined
  if (!Buffer.isBuffer(v) || v.length === 0) throw invalidArgType(name, 'a non-empty Buffer (DER)', v)
  return v
}

function ticketKeys(v: unknown): Buffer | undefined {
  if (v === undefined) return undefined
  if (!Buffer.isBuffer(v)) throw invalidArgType('ticketKeys', 'Buffer', v)
  if (v.length !== 48) throw new NetloopError('ERR_INVALID_ARG_VALUE', `The property 'options.ticketKeys' must be exactly 48 bytes. Received ${v.length}`)
  return v
}

/**
 * A TLS configuration, parsed once. Share one context by every connection; to use it on a
 * worker thread of an `EventLoopGroup`, pass it in `workerData` (it crosses as its id) and give
 * what arrives to `new SslHandler(...)`: the worker uses the same parsed context.
 */
export class SslContext implements SharedSslContext {
  /** The context's process-wide id (what crosses to worker threads). */
  readonly netloopSslContext: number
  readonly #native: InstanceType<typeof native.NativeSslContext>
  #sniCallback: SNICallback | undefined
  #checkServerIdentity: SslContextOptions['checkServerIdentity']

  constructor(options: SslContextOptions | SharedSslContext) {
    this.#sniCallback = isShared(options) ? undefined : options?.SNICallback
    this.#checkServerIdentity = isShared(options) ? undefined : options?.checkServerIdentity
    try {
      this.#native = isShared(options)
        ? native.NativeSslContext.fromId(options.netloopSslContext)
        : new native.NativeSslContext(native_(options))
    } catch (e) {
      throw e instanceof NetloopError ? e : fromNative(e)
    }
    this.netloopSslContext = this.#native.id
  }

  /** A server context (`isServer: true`). */
  static forServer(options: Omit<SslContextOptions, 'isServer'>): SslContext {
    return new SslContext({ ...options, isServer: true })
  }

  /** A client context. */
  static forClient(options: Omit<SslContextOptions, 'isServer'> = {}): SslContext {
    return new SslContext({ ...options, isServer: false })
  }

  get isServer(): boolean {
    return this.#native.isServer
  }

  /**
   * Replaces this context's configuration in place, as node:tls's `server.setSecureContext`
   * does: to rotate certificates without a restart. Handshakes that start afterwards, on every
   * thread using this context (worker threads included), get the new configuration;
   * established connections keep theirs. `options` is a whole configuration (what is left out
   * takes its default), of the same side (`isServer` may be omitted), with an `SNICallback`
   * exactly when the context had one. Sessions from before do not resume (new ticket keys, an
   * empty session cache). On an error nothing changes.
   */
  reload(options: SslContextOptions): void {
    if (options === null || typeof options !== 'object') throw invalidArgType('options', 'object', options)
    const full = { ...options, isServer: options.isServer ?? this.isServer }
    try {
      this.#native.reload(native_(full))
    } catch (e) {
      throw e instanceof NetloopError ? e : fromNative(e)
    }
    if (this.#sniCallback !== undefined) this.#sniCallback = options.SNICallback
    if (this.#checkServerIdentity !== undefined) this.#checkServerIdentity = options.checkServerIdentity
  }

  /** @internal The `SNICallback` option. */
  get _sniCallback(): SNICallback | undefined {
    return this.#sniCallback
  }

  /** @internal The `checkServerIdentity` option. */
  get _checkServerIdentity(): SslContextOptions['checkServerIdentity'] {
    return this.#checkServerIdentity
  }
}

function isShared(v: unknown): v is SharedSslContext {
  return typeof v === 'object' && v !== null && !(v instanceof SslContext) && typeof (v as SharedSslContext).netloopSslContext === 'number'
}

/**
 * Fired to every handler when the handshake completes (Netty's `SslHandshakeCompletionEvent`):
 * `isSuccess`, or `cause` with the reason (also sent to `exceptionCaught`).
 */
export class SslHandshakeCompletionEvent {
  static readonly SUCCESS = new SslHandshakeCompletionEvent(undefined)
  private constructor(readonly cause: NetloopError | undefined) {}
  get isSuccess(): boolean {
    return this.cause === undefined
  }
  /** @internal */
  static failed(cause: NetloopError): SslHandshakeCompletionEvent {
    return new SslHandshakeCompletionEvent(cause)
  }
}

/** Fired when the peer sent close_notify (Netty's `SslCloseCompletionEvent`); the channel then closes. */
export class SslCloseCompletionEvent {
  static readonly INSTANCE = new SslCloseCompletionEvent()
  private constructor() {}
}

/**
 * TLS for one connection (Netty's `SslHandler`), made per channel from a shared context and
 * added first in the pipeline. Runs natively: records never cross into JS.
 */
export class SslHandler extends NativeHandler {
  #settle: ((e: SslHandshakeCompletionEvent) => void) | undefined
  #done: Promise<SslHandshakeCompletionEvent> | undefined
  #event: SslHandshakeCompletionEvent | undefined
  readonly #context: SslContext
  /** @internal */ _channel: Channel | undefined
  /** @internal What the `SNICallback` refused with or threw (the `ERR_TLS_SNI_CALLBACK` error's cause). */
  _sniError: unknown
  /** @internal What `checkServerIdentity` returned or threw (the `ERR_TLS_SERVER_IDENTITY` error's cause). */
  _identityError: unknown

  /**
   * @param context an `SslContext`, or one that crossed to this worker thread in `workerData`
   * @param options.servername client: the name to send and verify (default: the context's
   *   `servername`, else the host given to `connect()` unless it is an IP address)
   */
  constructor(context: SslContext | SharedSslContext, options: { servername?: string } = {}) {
    const ctx = context instanceof SslContext ? context : isShared(context) ? new SslContext(context) : undefined
    if (!ctx) throw invalidArgType('context', 'SslContext', context)
    if (options.servername !== undefined && typeof options.servername !== 'string') throw invalidArgType('servername', 'string', options.servername)
    super(NativeHandlerKind.Tls, [ctx.netloopSslContext], options.servername !== undefined ? [Buffer.from(options.servername)] : undefined)
    this.#context = ctx
  }

  /** @internal The native side read a ClientHello naming `servername` and waits for the context's `SNICallback`. */
  _askServerName(servername: string): void {
    const callback = this.#context._sniCallback
    const ch = this._channel
    if (!ch) return
    if (!callback) {
      // No callback on this thread (cannot happen through the public API): the default.
      answerServerName(ch, servername, { kind: 'answer', value: undefined })
      return
    }
    runSniCallback(callback, servername, (o) => {
      if (o.kind !== 'answer') this._sniError = o.error
      answerServerName(ch, servername, o)
    })
  }

  /**
   * @internal The native side finished a client handshake with a verified chain and waits for
   * the context's `checkServerIdentity` verdict on `hostname`. Without the function on this
   * thread (not reachable through the public API) the server is refused: nothing unjudged.
   */
  _checkServerIdentity(hostname: string): void {
    const ch = this._channel
    if (!ch || !ch._known) return
    const judge = this.#context._checkServerIdentity
    let error: unknown
    try {
      const cert = tlsInfo(ch)?.peerCertificate
      error = !judge ? new Error('checkServerIdentity is not available on this thread') : cert ? judge(hostname, cert) : new Error('the server sent no certificate')
    } catch (e) {
      error = e ?? new Error('checkServerIdentity threw')
    }
    if (error != null) this._identityError = error
    try {
      ch._hub.sync()
      ch._hub.native.tlsAnswerServerIdentity(ch.id, error == null, error == null ? '' : describeError(error))
    } catch {
      // The channel left its hub meanwhile: nothing waits for the answer.
    }
  }

  /** @internal Fills in the connect host as the server name (node:tls's default). */
  override _attach(ch: Channel): void {
    this._channel = ch
    const host = ch._connectHost
    if (this._delimiters === undefined && host !== undefined && isIP(host) === 0) {
      ;(this as { _delimiters?: Buffer[] })._delimiters = [Buffer.from(host)]
    }
  }

  /** @internal The native side reported the handshake's outcome. */
  _handshakeDone(event: SslHandshakeCompletionEvent): void {
    if (this.#event) return
    this.#event = event
    this.#settle?.(event)
  }

  /** @internal The channel closed: keep its session for `channel.tls` (read while the native side still has it). */
  override _onClosed(): void {
    if (this.#event?.isSuccess && this._channel) tlsInfo(this._channel)
  }

  /**
   * Resolves with the negotiated parameters when the handshake completes; rejects with its
   * failure (Netty's `handshakeFuture()`).
   */
  handshakeFuture(): Promise<TlsInfo> {
    this.#done ??= this.#event
      ? Promise.resolve(this.#event)
      : new Promise((resolve) => {
          this.#settle = resolve
        })
    return this.#done.then((e) => {
      if (e.cause) throw e.cause
      const info = this._channel ? tlsInfo(this._channel) : undefined
      if (!info) throw new NetloopError('ERR_TLS_CLOSED', 'the channel closed before the TLS session could be read')
      return info
    })
  }
}

/** Hands a callback's outcome to the channel's native `SslHandler` (ignored once it stopped waiting). */
function answerServerName(ch: Channel, servername: string, o: SniOutcome): void {
  if (!ch._known) return
  let kind = ServerNameAnswer.Default
  let id = 0
  let message = ''
  if (o.kind === 'refuse') {
    kind = ServerNameAnswer.Refuse
    message = `the SNICallback refused ${JSON.stringify(servername)}: ${describeError(o.error)}`
  } else if (o.kind === 'fail') {
    kind = ServerNameAnswer.Fail
    message = `the SNICallback for ${JSON.stringify(servername)} threw: ${describeError(o.error)}`
  } else if (o.value instanceof SslContext && o.value.isServer) {
    kind = ServerNameAnswer.Context
    id = o.value.netloopSslContext
  } else if (o.value != null) {
    kind = ServerNameAnswer.Fail
    message = `the SNICallback for ${JSON.stringify(servername)} answered with something that is not a server SslContext`
  }
  try {
    ch._hub.sync()
    ch._hub.native.tlsAnswerServerName(ch.id, kind, id, message)
  } catch {
    // The channel left its hub meanwhile: nothing waits for the answer.
  }
}

/** @internal The channel's `SslHandler`, if it has one. */
export function tlsHandlerOf(ch: Channel): SslHandler | undefined {
  const p = ch.pipeline
  for (let c = p._head._next; c && c !== p._tail; c = c._next) if (c.nativeHandler instanceof SslHandler) return c.nativeHandler
  return undefined
}

declare module './channel' {
  interface Channel {
    /** What the channel's `SslHandler` negotiated; undefined before the handshake or without TLS. */
    readonly tls: TlsInfo | undefined
  }
}

Object.defineProperty(Channel.prototype, 'tls', {
  get(this: Channel) {
    return tlsInfo(this)
  },
  configurable: true,
})
