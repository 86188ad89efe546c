// `--proxy-protocol` for the example servers: behind HAProxy (`send-proxy`, `send-proxy-v2`) or
// a load balancer that sends the PROXY protocol header, an HAProxyMessageDecoder goes first in
// every pipeline (before TLS), so `ctx.channel.haproxy` names the client. Try it with
// `curl --haproxy-protocol http://127.0.0.1:8080/` against `http-hello.ts --proxy-protocol`; a
// client that sends no header is refused (ERR_HAPROXY_PROTOCOL) and closed.
import { isMainThread, workerData } from 'node:worker_threads'
import { type Channel, HAProxyMessageDecoder } from 'netloop'

/** True when the command line asks for the PROXY protocol. */
export function proxyProtocolArg(): boolean {
  return process.argv.includes('--proxy-protocol')
}

/** `init` with an HAProxyMessageDecoder first (or `init` itself when `on` is false). */
export function withProxyProtocol(on: boolean, init: (ch: Channel) => void): (ch: Channel) => void {
  if (!on) return init
  return (ch) => {
    init(ch)
    ch.pipeline.addFirst('proxy', new HAProxyMessageDecoder())
  }
}

/**
 * On a worker thread of a `--proxy-protocol --threads N` run (`workerData.proxyProtocol`): adds
 * the decoder first. Every handler module's `childHandler` calls it after `addWorkerTls`, so the
 * decoder ends up in front of the SslHandler.
 */
export function addWorkerProxyProtocol(ch: Channel): void {
  if (isMainThread || !(workerData as { proxyProtocol?: boolean } | undefined)?.proxyProtocol) return
  ch.pipeline.addFirst('proxy', new HAProxyMessageDecoder())
}
