//! PKCS#12 identities (node:tls's `pfx`): files written by `openssl pkcs12 -export` under each
//! scheme a user meets, read back into a context that completes handshakes; wrong passphrases,
//! refused schemes and damaged files fail with their reason.

use crate::common;
use crate::net;
use crate::pair;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::pki::Ca;
use net::Net;
use netloop_tls::{PemIdentity, SslContext, SslOptions, TlsError};
use pair::{client_opts, tls_client, tls_server};

/// A directory of its own under the target directory, emptied.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pfx-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `identity` (and `extra` certificates) written by `openssl pkcs12 -export` with `args`.
fn export(name: &str, identity: &PemIdentity, extra: &str, args: &[&str]) -> Vec<u8> {
    let dir = scratch(name);
    std::fs::write(dir.join("cert.pem"), &identity.chain).unwrap();
    std::fs::write(dir.join("key.pem"), &identity.key).unwrap();
    std::fs::write(dir.join("extra.pem"), extra).unwrap();
    let mut cmd = Command::new("openssl");
    cmd.current_dir(&dir).args([
        "pkcs12", "-export", "-in", "cert.pem", "-inkey", "key.pem", "-out", "out.pfx",
    ]);
    if !extra.is_empty() {
        cmd.args(["-certfile", "extra.pem"]);
    }
    let out = cmd
        .args(args)
        .output()
        .expect("openssl (the TLS tests' peer) is installed");
    assert!(
        out.status.success(),
        "openssl pkcs12 {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(dir.join("out.pfx")).unwrap()
}

fn pem_count(pem: &[u8]) -> usize {
    String::from_utf8_lossy(pem)
        .matches("BEGIN CERTIFICATE")
        .count()
}

/// A server made from `identity` completes a handshake with a client trusting `ca`.
fn serves(ca: &Ca, identity: PemIdentity) {
    let net = Net::new();
    let so = SslOptions {
        identity: Some(identity),
        ..Default::default()
    };
    let (_server, addr) = tls_server(&net, SslContext::server(&so).unwrap());
    let (_c, log) = tls_client(
        &net,
        SslContext::client(&client_opts(ca)).unwrap(),
        "localhost",
        addr,
    );
    assert_eq!(log.borrow().handshake(), Some("ok"));
}

fn config_error(r: Result<PemIdentity, TlsError>) -> String {
    match r {
        Err(TlsError::Config(m)) => m,
        Err(e) => panic!("not a config error: {e}"),
        Ok(_) => panic!("the file was accepted"),
    }
}

#[test]
fn openssl_3s_default_file_serves_its_chain_leaf_first() {
    let ca = Ca::new("pfx CA");
    let leaf = ca.leaf(&["localhost"]);
    let der = export("default", &leaf, &ca.pem, &["-passout", "pass:s3cret"]);
    let id = PemIdentity::from_pfx(&der, Some(b"s3cret"), None, "pfx").unwrap();
    assert_eq!(
        pem_count(&id.chain),
        2,
        "the leaf and the CA that issued it"
    );
    assert!(
        String::from_utf8_lossy(&id.chain).starts_with(&String::from_utf8_lossy(&leaf.chain)[..64]),
        "the leaf comes first"
    );
    serves(&ca, id);
}

#[test]
fn the_older_3des_scheme_with_a_sha1_mac_is_read_as_node_tls_reads_it() {
    let ca = Ca::new("pfx CA");
    let leaf = ca.leaf(&["localhost"]);
    let der = export(
        "3des",
        &leaf,
        &ca.pem,
        &[
            "-passout",
            "pass:s3cret",
            "-keypbe",
            "PBE-SHA1-3DES",
            "-certpbe",
            "PBE-SHA1-3DES",
            "-macalg",
            "sha1",
        ],
    );
    let id = PemIdentity::from_pfx(&der, Some(b"s3cret"), None, "pfx").unwrap();
    assert_eq!(pem_count(&id.chain), 2);
    serves(&ca, id);
}

#[test]
fn an_empty_passphrase_and_no_passphrase_open_a_file_made_with_an_empty_one() {
    let ca = Ca::new("pfx CA");
    let leaf = ca.leaf(&["localhost"]);
    let der = export("empty", &leaf, "", &["-passout", "pass:"]);
    PemIdentity::from_pfx(&der, Some(b""), None, "pfx").unwrap();
    let id = PemIdentity::from_pfx(&der, None, None, "pfx").unwrap();
    assert_eq!(pem_count(&id.chain), 1);
    serves(&ca, id);
}

#[test]
fn a_file_without_encryption_or_mac_is_read() {
    let ca = Ca::new("pfx CA");
    let leaf = ca.leaf(&["localhost"]);
    let der = export(
        "plain",
        &leaf,
        &ca.pem,
        &[
            "-passout", "pass:", "-keypbe", "NONE", "-certpbe", "NONE", "-nomac",
        ],
    );
    serves(&ca, PemIdentity::from_pfx(&der, None, None, "pfx").unwrap());
}

#[test]
fn a_wrong_passphrase_fails_the_mac_check_and_names_the_option() {
    let ca = Ca::new("pfx CA");
    let der = export(
        "wrong",
        &ca.leaf(&["localhost"]),
        "",
        &["-passout", "pass:right"],
    );
    let m = config_error(PemIdentity::from_pfx(&der, Some(b"wrong"), None, "pfx"));
    assert!(m.starts_with("pfx: "), "{m}");
    assert!(m.contains("wrong passphrase"), "{m}");
    let m = config_error(PemIdentity::from_pfx(&der, None, None, "pfx"));
    assert!(m.contains("wrong passphrase"), "{m}");
}

#[test]
fn rc2_files_are_refused_with_the_command_that_converts_them() {
    let ca = Ca::new("pfx CA");
    let leaf = ca.leaf(&["localhost"]);
    let dir = scratch("rc2-probe");
    // RC2 needs OpenSSL's legacy provider: without it there is no such file to refuse.
    let legacy = Command::new("openssl")
        .current_dir(&dir)
        .args(["list", "-providers", "-provider", "legacy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !legacy {
        eprintln!("skipped: OpenSSL's legacy provider is not installed");
        return;
    }
    let der = export("rc2", &leaf, "", &["-passout", "pass:s3cret", "-legacy"]);
    let m = config_error(PemIdentity::from_pfx(&der, Some(b"s3cret"), None, "pfx"));
    assert!(m.contains("RC2 or RC4"), "{m}");
    assert!(m.contains("openssl pkcs12"), "{m}");
}

#[test]
fn damaged_and_foreign_files_fail_with_a_reason() {
    let ca = Ca::new("pfx CA");
    let der = export(
        "damaged",
        &ca.leaf(&["localhost"]),
        "",
        &["-passout", "pass:s3cret"],
    );
    // A flipped byte inside the MAC-protected content.
    let mut bad = der.clone();
    let at = bad.len() / 2;
    bad[at] ^= 0x55;
    let m = config_error(PemIdentity::from_pfx(&bad, Some(b"s3cret"), None, "pfx"));
    assert!(m.starts_with("pfx: "), "{m}");
    // A PEM certificate is not a PKCS#12 file.
    let m = config_error(PemIdentity::from_pfx(
        ca.pem.as_bytes(),
        Some(b"s3cret"),
        None,
        "pfx",
    ));
    assert!(m.contains("not a PKCS#12"), "{m}");
    // Nor is a truncated one.
    let m = config_error(PemIdentity::from_pfx(
        &der[..der.len() - 40],
        Some(b"s3cret"),
        None,
        "pfx",
    ));
    assert!(m.contains("not a PKCS#12"), "{m}");
}

#[test]
fn a_file_holding_only_certificates_has_no_identity() {
    let ca = Ca::new("pfx CA");
    let leaf = ca.leaf(&["localhost"]);
    let dir = scratch("nokey");
    std::fs::write(dir.join("cert.pem"), &leaf.chain).unwrap();
    let out = Command::new("openssl")
        .current_dir(&dir)
        .args([
            "pkcs12", "-export", "-nokeys", "-in", "cert.pem", "-out", "out.pfx", "-passout",
            "pass:x",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let der = std::fs::read(dir.join("out.pfx")).unwrap();
    let m = config_error(PemIdentity::from_pfx(&der, Some(b"x"), None, "pfx"));
    assert!(m.contains("no private key"), "{m}");
}
