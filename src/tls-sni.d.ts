import type { SslContext } from './tls';
/**
 * node:tls's `SNICallback`: called once per connection whose client names a server, on the
 * thread of the channel's loop; answer `cb(null, context)` (a server `SslContext`), `cb(null)`
 * for the context's own certificates, or `cb(err)` to refuse the name. A function declaring
 * fewer than two parameters answers with its return value instead (a context, undefined, or a
 * Promise of one; a rejection refuses the name).
 */
export type SNICallback<Context = SslContext> = (servername: string, cb: (err: Error | null | undefined, context?: Context | null) => void) => void | Context | null | Promise<Context | null | undefined>;
/** What a callback came to. */
export type SniOutcome = 
/** `value`: what the callback answered as the context (undefined/null: the default). */
{
    kind: 'answer';
    value: unknown;
}
/** It refused the name (`cb(err)`, a rejected promise). */
 | {
    kind: 'refuse';
    error: unknown;
}
/** It failed (threw, or its async body rejected after it meant to call back). */
 | {
    kind: 'fail';
    error: unknown;
};
