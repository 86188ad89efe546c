// WebSocket chat with rooms: open http://127.0.0.1:8082/ in a browser (the page is served on
// the same port as the WebSocket, /ws), pick a name and a room, talk. Rooms are topics
// (subscribe/publish): a message is encoded once, natively, and written to every member of
// the room, on every worker thread with --threads N. The pipeline and the protocol are in
// ws-chat-room.ts, the page in ws-chat.html.
//
//   node --import tsx examples/ws-chat.ts [--port 8082]   # PORT=... works too; --port 0 picks one
//   node -e "const W=require('ws');const w=new W('ws://127.0.0.1:8082/ws');w.on('open',()=>{w.send(JSON.stringify({type:'join',room:'lobby',name:'cli'}));w.send(JSON.stringify({type:'say',text:'hi'}))});w.on('message',(m)=>console.log(String(m)))"
//
// Options:
//   --threads N   (default 1) serve connections on N worker threads, each importing
//                 ws-chat-room.ts (the loop on the main thread accepts); a room's members on
//                 every worker get its messages (the topic registry is shared by the process).
//   --tls         serve https: and wss: (see lib/tls.ts).
import { childHandler } from './ws-chat-room'
import { runExample, start } from './lib/server'

start(() =>
  runExample({
    name: 'ws-chat',
    defaultPort: 8082,
    childHandler,
    handlersModule: () => require.resolve('./ws-chat-room'),
    alpn: ['http/1.1'],
    childOptions: { tcpNoDelay: true },
  }),
)
