//! Conformance against a real peer: the `ws` package's client (and raw sockets for the frames
//! no library sends), in node, against the native echo server of
//! examples/ws_echo_server.rs running in this process. Echo of text, binary, a 200 KB
//! message and a fragmented one; ping answered with pong; the close handshake with the
//! client's code; each bad frame answered with its close code and the connection ended; a
//! truncated frame followed by end of input ends the connection; a version 8 handshake
//! refused with 426.
//!
//! The same echo cases with Python's `websockets` client (a second, independent
//! implementation that checks the server's frames strictly), and the subprotocol chosen.
//!
//! Needs `node` and the repository's `node_modules` (`npm ci`), and a Python with
//! `websockets` (Debian's python3-websockets; .ci/run installs it); without them a test says
//! so and passes.

use crate::server;

use std::path::Path;
use std::process::Command;

fn field<'a>(json: &'a str, case: &str) -> &'a str {
    let key = format!("\"{case}\":{{");
    let key = if json.contains(&key) {
        key
    } else {
        format!("\"{case}\": {{")
    };
    let start = json
        .find(&key)
        .unwrap_or_else(|| panic!("no case {case} in {json}"))
        + key.len()
        - 1;
    let end = start + json[start..].find('}').expect("case end") + 1;
    &json[start..end]
}

#[test]
fn the_ws_package_and_raw_peers_see_rfc_6455_behaviour() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if !root.join("node_modules/ws/package.json").exists() {
        eprintln!("skipped: node_modules/ws missing (run npm ci)");
        return;
    }
    let srv = server::serve("127.0.0.1:0".parse().unwrap()).expect("server starts");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/ws_peer.mjs");
    let out = Command::new("node")
        .arg(script)
        .arg(srv.addr.to_string())
        .output()
        .expect("node runs");
    srv.stop();
    let json = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!json.contains("\"error\""), "the peer stopped: {json}");
    let expect = [
        ("text", r#"{"data":"héllo €","isBinary":false}"#),
        ("binary", r#"{"hex":"000102ff","isBinary":true}"#),
        ("large", r#"{"length":200000,"same":true}"#),
        ("fragmented", r#"{"data":"fragmented","isBinary":false}"#),
        ("ping", r#"{"pong":"p1"}"#),
        ("close", r#"{"code":4001,"reason":""}"#),
        (
            "unmasked",
            r#"{"status":101,"accepted":true,"ended":true,"opcode":8,"closeCode":1002}"#,
        ),
        (
            "badUtf8",
            r#"{"status":101,"accepted":true,"ended":true,"opcode":8,"closeCode":1007}"#,
        ),
        (
            "badUtf8Fragments",
            r#"{"status":101,"accepted":true,"ended":true,"opcode":8,"closeCode":1007}"#,
        ),
        (
            "reservedOpcode",
            r#"{"status":101,"accepted":true,"ended":true,"opcode":8,"closeCode":1002}"#,
        ),
        (
            "reservedBits",
            r#"{"status":101,"accepted":true,"ended":true,"opcode":8,"closeCode":1002}"#,
        ),
        (
            "longPing",
            r#"{"status":101,"accepted":true,"ended":true,"opcode":8,"closeCode":1002}"#,
        ),
        (
            "fragmentedPing",
            r#"{"status":101,"accepted":true,"ended":true,"opcode":8,"closeCode":1002}"#,
        ),
        (
            "tooBig",
            r#"{"status":101,"accepted":true,"ended":true,"opcode":8,"closeCode":1009}"#,
        ),
        // The transport closes through the pipeline at the peer's end of input: close 1000 goes
        // out before the connection ends.
        (
            "shortPayload",
            r#"{"status":101,"accepted":true,"ended":true,"opcode":8,"closeCode":1000}"#,
        ),
        (
            "version8",
            r#"{"status":426,"accepted":false,"ended":true}"#,
        ),
    ];
    for (case, want) in expect {
        assert_eq!(field(&json, case), want, "case {case}");
    }
}

/// A Python that has `websockets`: the one on PATH, or Debian's.
fn python_with_websockets() -> Option<&'static str> {
    ["python3", "/usr/bin/python3"].into_iter().find(|py| {
        Command::new(py)
            .args(["-c", "import websockets"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
fn pythons_websockets_client_sees_echo_fragments_ping_and_the_close_handshake() {
    let Some(python) = python_with_websockets() else {
        // CI installs the peer (.ci/run): there a missing one fails, as the other clients do,
        // unless apt said it cannot be had (NETLOOP_UNINSTALLABLE_CLIENTS).
        let uninstallable = std::env::var("NETLOOP_UNINSTALLABLE_CLIENTS").unwrap_or_default();
        assert!(
            std::env::var_os("CI").is_none() || uninstallable.contains("python3-websockets"),
            "CI: no Python with websockets, and .ci/run did not say it could not install it"
        );
        eprintln!("skipped: no Python with websockets (apt-get install python3-websockets)");
        return;
    };
    let srv = server::serve("127.0.0.1:0".parse().unwrap()).expect("server starts");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/websockets_peer.py");
    let out = Command::new(python)
        .arg(script)
        .arg(srv.addr.to_string())
        .output()
        .expect("python runs");
    srv.stop();
    let json = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!json.contains("\"error\""), "the peer stopped: {json}");
    assert!(json.contains(r#""subprotocol": "chat""#), "{json}");
    let expect = [
        ("text", r#"{"data": "héllo €", "type": "str"}"#),
        ("binary", r#"{"hex": "000102ff", "type": "bytes"}"#),
        ("large", r#"{"length": 512000, "same": true}"#),
        ("fragmented", r#"{"data": "fragmented"}"#),
        ("ping", r#"{"pong": true}"#),
        ("close", r#"{"code": 4002, "reason": ""}"#),
    ];
    for (case, want) in expect {
        assert_eq!(field(&json, case), want, "case {case}");
    }
}
