/** What an `ALPNCallback` is given. */
export interface ALPNCallbackInfo {
    /** The server name the client asked for (SNI), if any. */
    servername: string | undefined;
    /** The ALPN protocols the client offered, in its order of preference. */
    protocols: string[];
}
/**
 * node:tls's `ALPNCallback`: called once per connection whose client offers ALPN protocols,
 * on the thread of the channel's loop, after the `SNICallback` (if any) chose the context.
 * Return one of `protocols` to serve it, or `undefined` to refuse the connection with the
 * `no_application_protocol` alert. Synchronous, as node:tls's.
 */
export type ALPNCallback = (info: ALPNCallbackInfo) => string | undefined;
/** What a callback came to. */
export type AlpnOutcome = 
/** Not asked: no callback, or the client offered no protocol. */
{
    kind: 'unasked';
} | {
    kind: 'select';
    protocol: string;
}
/** It returned `undefined`. */
 | {
    kind: 'refuse';
}
/** It returned something that is not one of the client's protocols. */
 | {
    kind: 'invalid';
    message: string;
}
/** It threw. */
 | {
    kind: 'fail';
    error: unknown;
};
