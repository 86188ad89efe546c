// A Redis-protocol (RESP2) server on netloop: redis-cli and redis-benchmark work against it.
// The protocol (decoder, encoder, commands, keyspace) is in resp-handlers.ts; this file starts
// the server.
//
//   node --import tsx examples/resp-server.ts [--port 6380]   # PORT=... works too; --port 0 picks one
//   redis-cli -p 6380 set greeting hello     # then: get greeting, incr n, del a b, exists a b, ...
//   redis-benchmark -p 6380 -t ping,set,get -P 16 -q
//   nc 127.0.0.1 6380                         # inline commands: type PING, SET a 1, GET a
//
// Options:
//   --threads N   (default 1) with N = 1 everything runs on one loop on the main thread. With
//                 N > 1 connections are served on N worker threads: the loop on the main
//                 thread accepts, and hands each connection to the next worker's loop (Netty's
//                 boss and worker groups); every worker imports resp-handlers.ts and runs its
//                 `childHandler` for the connections it gets.
//   --reuse-port  with N > 1: every worker binds its own SO_REUSEPORT listener on the port
//                 instead, and the kernel spreads the connections.
//   --stats       on SIGINT/SIGTERM, print `stats <JSON>` (the metrics() of each loop serving
//                 connections: bytesIn, bytesOut, channels, ...) before exiting.
//   --idle S      close a connection after S seconds without traffic (default 300; 0: never,
//                 as Redis's `timeout 0`).
//
// !! With N > 1 EACH WORKER HAS ITS OWN KEYSPACE. A SET on one connection is not visible to a
// !! GET on a connection that another worker serves; DBSIZE and FLUSHALL see one worker's keys.
// !! A real multi-threaded store would shard the keys across the workers (sending each
// !! command to the worker that owns its key) or keep them in shared memory. Use N = 1 (the
// !! default) for Redis semantics; N > 1 shows the threading, e.g. under redis-benchmark,
// !! whose connections each read back only keys they themselves wrote.
import { IDLE_DEFAULT, childHandler } from './resp-handlers'
import { idleSeconds } from './lib/idle'
import { runExample, start } from './lib/server'

start(() =>
  runExample({
    name: 'resp',
    defaultPort: 6380,
    childHandler,
    handlersModule: () => require.resolve('./resp-handlers'),
    childOptions: { tcpNoDelay: true },
    idleSeconds: idleSeconds(IDLE_DEFAULT),
  }),
)
