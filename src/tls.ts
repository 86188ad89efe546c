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
import type { Channel } from './channel'
import { NativeHandler } from './codecs'
import { NativeHandlerKind, ProtocolAnswer, ServerNameAnswer } from './protocol'
import { NetloopError, fromNative, invalidArg, invalidArgType } from './errors'
import { type SNICallback, type SniOutcome, describeError, runSniCallback } from './tls-sni'
import { type ALPNCallback, type AlpnOutcome, runAlpnCallback } from './tls-alpn'
import { type TlsInfo, tlsInfo } from './tls-info'
import { type SharedSslContext, type SslContextOptions, nativeOptions } from './tls-options'

export type { SNICallback } from './tls-sni'
export type { ALPNCallback, ALPNCallbackInfo } from './tls-alpn'
export type { PeerCertificate, TlsInfo } from './tls-info'
export type { SharedSslContext, SslContextOptions } from './tls-options'
export type { KeyObjectPem, PemIdentity, PfxIdentity, PfxObject, SslIdentity } from './tls-identity'

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
  #alpnCallback: ALPNCallback | undefined
  #checkServerIdentity: SslContextOptions['checkServerIdentity']

  constructor(options: SslContextOptions | SharedSslContext) {
    this.#sniCallback = isShared(options) ? undefined : options?.SNICallback
    this.#alpnCallback = isShared(options) ? undefined : options?.ALPNCallback
    this.#checkServerIdentity = isShared(options) ? undefined : options?.checkServerIdentity
    try {
      this.#native = isShared(options)
        ? native.NativeSslContext.fromId(options.netloopSslContext)
        : new native.NativeSslContext(nativeOptions(options))
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
   * takes its default), of the same side (`isServer` may be omitted), with an `SNICallback`,
   * an `ALPNCallback` and a `checkServerIdentity` exactly when the context had one. Sessions from before do not resume (new ticket keys, an
   * empty session cache). On an error nothing changes.
   */
  reload(options: SslContextOptions): void {
    if (options === null || typeof options !== 'object') throw invalidArgType('options', 'object', options)
    const full = { ...options, isServer: options.isServer ?? this.isServer }
    try {
      this.#native.reload(nativeOptions(full))
    } catch (e) {
      throw e instanceof NetloopError ? e : fromNative(e)
    }
    if (this.#sniCallback !== undefined) this.#sniCallback = options.SNICallback
    if (this.#alpnCallback !== undefined) this.#alpnCallback = options.ALPNCallback
    if (this.#checkServerIdentity !== undefined) this.#checkServerIdentity = options.checkServerIdentity
  }

  /** @internal The `SNICallback` option. */
  get _sniCallback(): SNICallback | undefined {
    return this.#sniCallback
  }

  /** @internal The `ALPNCallback` option. */
  get _alpnCallback(): ALPNCallback | undefined {
    return this.#alpnCallback
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
 * A context of the wrong side for the channel is a mistake that would otherwise show only as
 * the peer's confusing handshake failure (a client context on an accepted channel sends a
 * ClientHello to the client: node:tls says ERR_SSL_UNEXPECTED_MESSAGE). Channels made by
 * `Bootstrap.connect` take client contexts, accepted channels server ones. The side is not
 * inferred from `cert`/`key`: a client may present a certificate too.
 */
function checkSide(context: SslContext, ch: Channel): void {
  const connected = ch._connectHost !== undefined
  if (context.isServer === !connected) return
  throw invalidArg(
    connected
      ? `SslHandler: a server context (isServer: true) on channel ${ch.id}, which connected to a server: use a client context (SslContext.forClient)`
      : `SslHandler: a client context on channel ${ch.id}, which a server accepted: make the context with isServer: true (or SslContext.forServer) to serve TLS`,
  )
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
  /**
   * @internal What the `SNICallback` refused with or threw, or what the `ALPNCallback` threw
   * (the cause of the `ERR_TLS_SNI_CALLBACK` or `ERR_TLS_ALPN_CALLBACK` error).
   */
  _helloError: unknown
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

  /**
   * @internal The native side read a ClientHello (naming `servername`, offering `protocols`)
   * and waits for the context's `SNICallback` and `ALPNCallback`, asked in that order.
   */
  _askClientHello(servername: string | undefined, protocols: string[]): void {
    const ch = this._channel
    if (!ch) return
    const sni = this.#context._sniCallback
    const alpn = this.#context._alpnCallback
    const withProtocol = (o: SniOutcome) => {
      if (o.kind !== 'answer') {
        this._helloError = o.error
        return answerClientHello(ch, servername, o, { kind: 'unasked' })
      }
      const p: AlpnOutcome = alpn && protocols.length > 0 ? runAlpnCallback(alpn, servername, protocols) : { kind: 'unasked' }
      if (p.kind === 'fail') this._helloError = p.error
      answerClientHello(ch, servername, o, p)
    }
    // Without a callback on this thread (not reachable through the public API): the default.
    if (servername !== undefined && sni) runSniCallback(sni, servername, withProtocol)
    else withProtocol({ kind: 'answer', value: undefined })
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

  /**
   * @internal Refuses a context of the wrong side for `ch` (see `checkSide`), then fills in
   * the connect host as the server name (node:tls's default).
   */
  override _attach(ch: Channel): void {
    checkSide(this.#context, ch)
    this._channel = ch
    const host = ch._connectHost
    if (this._delimiters === undefined && host !== undefined && isIP(host) === 0) {
      this._setDelimiters([Buffer.from(host)])
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

/** Hands the callbacks' outcomes to the channel's native `SslHandler` (ignored once it stopped waiting). */
function answerClientHello(ch: Channel, servername: string | undefined, o: SniOutcome, p: AlpnOutcome): void {
  if (!ch._known) return
  let kind = ServerNameAnswer.Default
  let id = 0
  let message = ''
  const name = JSON.stringify(servername)
  if (o.kind === 'refuse') {
    kind = ServerNameAnswer.Refuse
    message = `the SNICallback refused ${name}: ${describeError(o.error)}`
  } else if (o.kind === 'fail') {
    kind = ServerNameAnswer.Fail
    message = `the SNICallback for ${name} threw: ${describeError(o.error)}`
  } else if (o.value instanceof SslContext && o.value.isServer) {
    kind = ServerNameAnswer.Context
    id = o.value.netloopSslContext
  } else if (o.value != null) {
    kind = ServerNameAnswer.Fail
    message = `the SNICallback for ${name} answered with something that is not a server SslContext`
  }
  let protocolKind = ProtocolAnswer.Default
  let protocol = ''
  let protocolMessage = ''
  if (p.kind === 'select') {
    protocolKind = ProtocolAnswer.Select
    protocol = p.protocol
  } else if (p.kind === 'refuse') {
    protocolKind = ProtocolAnswer.Refuse
  } else if (p.kind === 'invalid') {
    protocolKind = ProtocolAnswer.Invalid
    protocolMessage = p.message
  } else if (p.kind === 'fail') {
    protocolKind = ProtocolAnswer.Fail
    protocolMessage = `the ALPNCallback threw: ${describeError(p.error)}`
  }
  try {
    ch._hub.sync()
    ch._hub.native.tlsAnswerClientHello(ch.id, kind, id, message, protocolKind, protocol, protocolMessage)
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
