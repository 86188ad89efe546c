"""A second real peer for crates/ws-upgrade/tests/it/peers.rs: Python's `websockets` client
(Debian's python3-websockets), which checks the server's frames strictly (unmasked, valid
lengths, the close handshake). Prints one JSON object: what it observed per case.
Usage: python3 websockets_peer.py HOST:PORT
"""
import asyncio
import json
import sys

import websockets


async def main(addr):
    out = {}
    async with websockets.connect(f"ws://{addr}/chat", subprotocols=["chat"]) as ws:
        out["subprotocol"] = ws.subprotocol
        await ws.send("héllo €")
        m = await asyncio.wait_for(ws.recv(), 5)
        out["text"] = {"data": m, "type": type(m).__name__}
        await ws.send(bytes([0, 1, 2, 255]))
        m = await asyncio.wait_for(ws.recv(), 5)
        out["binary"] = {"hex": m.hex(), "type": type(m).__name__}
        big = bytes(range(256)) * 2000
        await ws.send(big)
        m = await asyncio.wait_for(ws.recv(), 5)
        out["large"] = {"length": len(m), "same": m == big}
        await ws.send(["frag", "men", "ted"])
        m = await asyncio.wait_for(ws.recv(), 5)
        out["fragmented"] = {"data": m}
        pong = await ws.ping(b"p1")
        await asyncio.wait_for(pong, 5)
        out["ping"] = {"pong": True}
        await asyncio.wait_for(ws.close(code=4002, reason="bye"), 5)
        out["close"] = {"code": ws.close_code, "reason": ws.close_reason}
    print(json.dumps(out, ensure_ascii=False))


try:
    asyncio.run(asyncio.wait_for(main(sys.argv[1]), 20))
except Exception as e:  # reported to the Rust test, which fails with it
    print(json.dumps({"error": repr(e)}))
