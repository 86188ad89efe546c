"""An independent TLS 1.3 peer (tlslite-ng) against a netloop TLS echo server.

Usage: keyupdate_peer.py PORT ROUNDS (the server's certificate is not checked: not the point)

Each round: a KeyUpdate(update_requested) from the client (the server answers with its own, so
both directions move to new keys), then data written behind it before anything is read (data
in flight both ways); every 7th round the KeyUpdate is fragmented over records of 2 bytes and
the data over records of 100 bytes; every 5th round a zero-length application data record
goes first; the echo is read back and compared. Prints one JSON line with the counts.
"""
import json
import socket
import sys

from tlslite.api import HandshakeSettings, TLSConnection
from tlslite.constants import ContentType, KeyUpdateMessageType
from tlslite.messages import Message


def main():
    port, rounds = int(sys.argv[1]), int(sys.argv[2])
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    # tlslite sends each record with its own send(): without this, Nagle holds the data behind
    # a KeyUpdate the server does not answer at once (rustls answers with its next record).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn = TLSConnection(sock)
    settings = HandshakeSettings()
    settings.minVersion = (3, 4)
    settings.maxVersion = (3, 4)
    conn.handshakeClientCert(settings=settings, serverName="localhost")
    assert conn.version == (3, 4), conn.version
    sent = received = fragmented = empty = 0
    for r in range(rounds):
        if r % 5 == 0:
            for _ in conn._sendMsg(Message(ContentType.application_data, bytearray(0))):
                pass
            empty += 1
        if r % 7 == 0:
            conn.recordSize = 2
            fragmented += 1
        for _ in conn.send_keyupdate_request(KeyUpdateMessageType.update_requested):
            pass
        conn.recordSize = 100 if r % 7 == 0 else 16384
        data = ("round %d " % r).encode() * (1 + r % 40)
        conn.write(data)
        conn.recordSize = 16384
        sent += len(data)
        got = bytearray()
        while len(got) < len(data):
            chunk = conn.read(max=len(data) - len(got))
            if not chunk:
                raise SystemExit("the server closed at round %d" % r)
            got += chunk
        if bytes(got) != data:
            raise SystemExit("round %d: echoed other bytes" % r)
        received += len(got)
    conn.close()
    print(json.dumps({"rounds": rounds, "sent": sent, "received": received,
                      "fragmented": fragmented, "empty": empty}))


if __name__ == "__main__":
    main()
