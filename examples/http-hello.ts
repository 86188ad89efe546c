// HTTP/1.1 "Hello, World!" with keep-alive and pipelining, on netloop (curl and wrk work).
// The protocol is netloop's native HTTP codec (HttpServerCodec) with a small JS handler, in
// http-handlers.ts (`--js-codec`: a pure-JS decoder instead); this file starts the server.
//
//   node --import tsx examples/http-hello.ts [--port 8080]   # PORT=... works too; --port 0 picks one
//   curl -v http://127.0.0.1:8080/ http://127.0.0.1:8080/     # the second request reuses the connection
//   wrk -t2 -c64 -d5s http://127.0.0.1:8080/
//
// Options:
//   --threads N   (default 1) with N = 1 everything runs on one loop on the main thread. With
//                 N > 1 connections are served on N worker threads: the loop on the main
//                 thread accepts, and hands each connection to the next worker's loop (Netty's
//                 boss and worker groups); every worker imports http-handlers.ts and runs its
//                 `childHandler` for the connections it gets.
//   --reuse-port  with N > 1: every worker binds its own SO_REUSEPORT listener on the port
//                 instead, and the kernel spreads the connections.
//   --stats       on SIGINT/SIGTERM, print `stats <JSON>` (the metrics() of each loop serving
//                 connections: bytesIn, bytesOut, channels, ...) before exiting.
//   --idle S      close a connection after S seconds without traffic (default 60; 0: never).
//   --header-timeout S   answer 408 and close when a request head takes longer than S seconds
//                 to arrive (default 10; 0: no limit).
//   --js-codec    parse and frame HTTP in JS (http-handlers.ts's HttpRequestDecoder) instead of
//                 the native codec: an example of a JS decoder, and a baseline for benchmarks.
import { IDLE_DEFAULT, childHandler, workerSettings } from './http-handlers'
import { idleSeconds } from './lib/idle'
import { runExample, start } from './lib/server'

start(() =>
  runExample({
    name: 'http',
    defaultPort: 8080,
    childHandler,
    handlersModule: () => require.resolve('./http-handlers'),
    alpn: ['http/1.1'],
    childOptions: { tcpNoDelay: true },
    workerData: workerSettings,
    idleSeconds: idleSeconds(IDLE_DEFAULT),
  }),
)
