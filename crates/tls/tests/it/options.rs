//! The context options a node:tls or Netty user expects beyond the basics: cipher suites and
//! their order, key-exchange groups, revocation lists, the key log.

use crate::common;
use crate::net;
use crate::pair;

use common::pki::Ca;
use net::Net;
use netloop_tls::{ClientAuth, SslContext, SslOptions, TlsVersion};
use pair::{
    clear_server_logs, client_failure, client_opts, server_log, server_opts, tls_client, tls_server,
};

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The cipher suite a handshake between `so` and `co` negotiates (client's view).
fn negotiated(so: &SslOptions, co: &SslOptions) -> String {
    let net = Net::new();
    let (_server, addr) = tls_server(&net, SslContext::server(so).unwrap());
    let (_c, log) = tls_client(&net, SslContext::client(co).unwrap(), "localhost", addr);
    assert_eq!(log.borrow().handshake(), Some("ok"));
    let cipher = log.borrow().session.as_ref().unwrap().cipher.clone();
    cipher
}

#[test]
fn the_server_picks_the_first_of_its_suites_that_the_client_offers() {
    let ca = Ca::new("test CA");
    let mut so = server_opts(&ca, &["localhost"]);
    so.cipher_suites = names(&["TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256"]);
    assert_eq!(
        negotiated(&so, &client_opts(&ca)),
        "TLS_CHACHA20_POLY1305_SHA256"
    );

    // TLS 1.2 by OpenSSL's name.
    let mut so = server_opts(&ca, &["localhost"]);
    so.max_version = TlsVersion::Tls12;
    so.cipher_suites = names(&["ECDHE-ECDSA-AES256-GCM-SHA384"]);
    assert_eq!(
        negotiated(&so, &client_opts(&ca)),
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
    );
}

#[test]
fn honor_cipher_order_false_follows_the_client() {
    let ca = Ca::new("test CA");
    let mut co = client_opts(&ca);
    co.cipher_suites = names(&["TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256"]);
    let so = server_opts(&ca, &["localhost"]);
    assert_eq!(
        negotiated(&so, &co),
        "TLS_AES_128_GCM_SHA256",
        "server order"
    );
    let mut so = server_opts(&ca, &["localhost"]);
    so.honor_cipher_order = false;
    assert_eq!(
        negotiated(&so, &co),
        "TLS_AES_256_GCM_SHA384",
        "client order"
    );
}

#[test]
fn no_suite_in_common_fails_both_sides_with_a_code() {
    let ca = Ca::new("test CA");
    let mut so = server_opts(&ca, &["localhost"]);
    so.cipher_suites = names(&["TLS_AES_256_GCM_SHA384"]);
    let mut co = client_opts(&ca);
    co.cipher_suites = names(&["TLS_AES_128_GCM_SHA256"]);
    let (hs, srv) = client_failure(so, co, "localhost");
    assert_eq!(hs, "ERR_TLS_ALERT_RECEIVED");
    assert!(
        srv.iter()
            .any(|e| e == "handshake ERR_TLS_NO_COMMON_PARAMETERS"),
        "{srv:?}"
    );
}

#[test]
fn a_restricted_group_list_still_agrees_with_a_client_that_offers_it() {
    let ca = Ca::new("test CA");
    let mut so = server_opts(&ca, &["localhost"]);
    so.groups = names(&["P-384"]);
    // The client's first key share (X25519) is refused: one HelloRetryRequest, then P-384.
    assert!(negotiated(&so, &client_opts(&ca)).starts_with("TLS_"));
    let mut co = client_opts(&ca);
    co.groups = names(&["X25519"]);
    let (hs, _) = client_failure(so, co, "localhost");
    assert_eq!(hs, "ERR_TLS_ALERT_RECEIVED");
}

#[test]
fn bad_suite_group_and_crl_options_are_config_errors() {
    let ca = Ca::new("test CA");
    for (what, edit) in [
        (
            "ciphers",
            Box::new(|o: &mut SslOptions| o.cipher_suites = names(&["DES-CBC3-SHA"]))
                as Box<dyn Fn(&mut SslOptions)>,
        ),
        (
            "ecdhCurve",
            Box::new(|o: &mut SslOptions| o.groups = names(&["P-521"])),
        ),
        (
            "crl",
            Box::new(|o: &mut SslOptions| {
                o.client_auth = ClientAuth::Require;
                o.crl = Some(b"not pem".to_vec());
            }),
        ),
        (
            "crl",
            Box::new(|o: &mut SslOptions| o.crl = Some(Ca::new("x").crl(&[], 30).into_bytes())),
        ),
        (
            "keyLogFile",
            Box::new(|o: &mut SslOptions| {
                o.key_log_file = Some("/nonexistent-dir/keys.log".into())
            }),
        ),
    ] {
        let mut o = server_opts(&ca, &["localhost"]);
        edit(&mut o);
        let e = SslContext::server(&o).unwrap_err();
        assert_eq!(e.code(), "ERR_TLS_INVALID_CONTEXT");
        assert!(e.to_string().contains(what), "{what}: {e}");
    }
}

#[test]
fn a_server_with_a_crl_refuses_a_revoked_client_certificate() {
    let ca = Ca::new("test CA");
    let mut so = server_opts(&ca, &["localhost"]);
    so.client_auth = ClientAuth::Require;
    so.ca = Some(ca.pem.clone().into_bytes());
    so.crl = Some(ca.crl(&[66], 30).into_bytes());

    let mut good = client_opts(&ca);
    good.identity = Some(ca.leaf_serial(&["alice"], true, 65));
    let net = Net::new();
    let (_server, addr) = tls_server(&net, SslContext::server(&so).unwrap());
    let (_c, log) = tls_client(&net, SslContext::client(&good).unwrap(), "localhost", addr);
    assert_eq!(log.borrow().handshake(), Some("ok"));
    drop(net);

    clear_server_logs();
    let mut revoked = client_opts(&ca);
    revoked.identity = Some(ca.leaf_serial(&["mallory"], true, 66));
    let (_hs, srv) = client_failure(so, revoked, "localhost");
    assert!(srv.iter().any(|e| e == "handshake CERT_REVOKED"), "{srv:?}");
}

#[test]
fn a_client_with_a_crl_refuses_a_revoked_server_and_one_whose_issuer_has_no_list() {
    let ca = Ca::new("test CA");
    let revoked = SslOptions {
        identity: Some(ca.leaf_serial(&["localhost"], false, 7)),
        ..Default::default()
    };
    let mut co = client_opts(&ca);
    co.crl = Some(ca.crl(&[7], 30).into_bytes());
    let (hs, _) = client_failure(revoked, co.clone(), "localhost");
    assert_eq!(hs, "CERT_REVOKED");

    clear_server_logs();
    let fine = SslOptions {
        identity: Some(ca.leaf_serial(&["localhost"], false, 8)),
        ..Default::default()
    };
    assert!(negotiated(&fine, &co).starts_with("TLS_"));

    // A list from another CA only: the server's status is unknown, as OpenSSL's
    // "unable to get certificate CRL".
    clear_server_logs();
    let mut other = client_opts(&ca);
    other.crl = Some(Ca::new("other CA").crl(&[], 30).into_bytes());
    let (hs, _) = client_failure(fine.clone(), other, "localhost");
    assert_eq!(hs, "UNABLE_TO_GET_CRL");

    // An expired list.
    clear_server_logs();
    let mut stale = client_opts(&ca);
    stale.crl = Some(ca.crl(&[], -1).into_bytes());
    let (hs, _) = client_failure(fine, stale, "localhost");
    assert_eq!(hs, "CRL_HAS_EXPIRED");
}

#[test]
fn the_key_log_holds_the_secrets_of_each_handshake_in_nss_format() {
    let ca = Ca::new("test CA");
    let dir = std::env::temp_dir().join(format!("netloop-keylog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server_file = dir.join("server.log");
    let client_file = dir.join("client.log");
    let _ = std::fs::remove_file(&server_file);
    let _ = std::fs::remove_file(&client_file);
    let mut so = server_opts(&ca, &["localhost"]);
    so.key_log_file = Some(server_file.clone());
    let mut co = client_opts(&ca);
    co.key_log_file = Some(client_file.clone());
    let net = Net::new();
    let (_server, addr) = tls_server(&net, SslContext::server(&so).unwrap());
    let cctx = SslContext::client(&co).unwrap();
    let (_c, log) = tls_client(&net, cctx.clone(), "localhost", addr);
    assert_eq!(log.borrow().handshake(), Some("ok"));
    let srv = server_log(0);
    net.run_until("server handshake", || srv.borrow().handshake().is_some());
    let mut tls12 = co.clone();
    tls12.max_version = TlsVersion::Tls12;
    let (_c2, log2) = tls_client(&net, SslContext::client(&tls12).unwrap(), "localhost", addr);
    assert_eq!(log2.borrow().handshake(), Some("ok"));
    let srv2 = server_log(1);
    net.run_until("server handshake 2", || srv2.borrow().handshake().is_some());

    let server = std::fs::read_to_string(&server_file).unwrap();
    let client = std::fs::read_to_string(&client_file).unwrap();
    let labels = |text: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.split(' ').next().unwrap().to_string())
            .collect()
    };
    for label in [
        "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
        "SERVER_HANDSHAKE_TRAFFIC_SECRET",
        "CLIENT_TRAFFIC_SECRET_0",
        "SERVER_TRAFFIC_SECRET_0",
        "CLIENT_RANDOM",
    ] {
        assert!(
            labels(&server).iter().any(|l| l == label),
            "{label}: {server}"
        );
    }
    for line in server.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        assert_eq!(parts.len(), 3, "{line}");
        assert_eq!(parts[1].len(), 64, "client random: {line}");
        assert!(parts[2].chars().all(|c| c.is_ascii_hexdigit()), "{line}");
    }
    // Both ends log the same secrets for the same handshakes.
    let sorted = |text: &str| {
        let mut v: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with("EXPORTER"))
            .collect();
        v.sort();
        v.join("\n")
    };
    assert_eq!(sorted(&server), sorted(&client));
    let _ = std::fs::remove_dir_all(&dir);
}
