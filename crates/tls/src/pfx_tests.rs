//! crate::pfx's own tests: chain order, the key's certificate, bounds, the KDF password.

use super::*;

/// A CA, an intermediate it signs and a leaf the intermediate signs: DERs and the leaf's
/// key (PKCS#8).
fn chain(root_name: &str) -> (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.distinguished_name.push(DnType::CommonName, root_name);
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let mid_key = KeyPair::generate().unwrap();
    let mut mid = CertificateParams::new(Vec::<String>::new()).unwrap();
    mid.distinguished_name
        .push(DnType::CommonName, "intermediate");
    mid.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let mid_cert = mid
        .signed_by(&mid_key, &Issuer::from_params(&ca, &ca_key))
        .unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    let leaf_cert = leaf
        .signed_by(&leaf_key, &Issuer::from_params(&mid, &mid_key))
        .unwrap();
    (
        ca_cert.der().to_vec(),
        mid_cert.der().to_vec(),
        leaf_cert.der().to_vec(),
        leaf_key.serialize_der(),
    )
}

#[test]
fn the_chain_is_ordered_from_the_key_s_certificate_up_whatever_the_bag_order() {
    let (root, mid, leaf, key) = chain("root");
    let unrelated = chain("another root").0;
    let bags = Bags {
        certs: vec![
            (None, unrelated),
            (None, root.clone()),
            (None, leaf.clone()),
            (None, mid.clone()),
        ],
        keys: vec![(None, key)],
    };
    let (got, _) = bags.identity().unwrap();
    assert_eq!(
        got,
        vec![leaf, mid, root],
        "leaf, intermediate, root; the unrelated CA left out"
    );
}

#[test]
fn the_local_key_id_picks_the_leaf_before_public_keys_are_compared() {
    let (root, _, leaf, key) = chain("root");
    let bags = Bags {
        certs: vec![(Some(vec![2]), root), (Some(vec![1]), leaf.clone())],
        keys: vec![(Some(vec![1]), key)],
    };
    assert_eq!(bags.identity().unwrap().0[0], leaf);
}

#[test]
fn a_key_without_its_certificate_is_refused() {
    let (root, mid, _, key) = chain("root");
    let bags = Bags {
        certs: vec![(None, root), (None, mid)],
        keys: vec![(None, key)],
    };
    assert!(bags
        .identity()
        .unwrap_err()
        .contains("no certificate for its private key"));
}

#[test]
fn iteration_counts_out_of_range_are_refused_before_any_work() {
    assert!(rounds(0).is_err());
    assert!(rounds(-5).is_err());
    assert!(rounds(MAX_ROUNDS + 1).is_err());
    assert_eq!(rounds(2048), Ok(2048));
}

#[test]
fn the_kdf_password_is_utf16_big_endian_with_a_terminator() {
    assert_eq!(bmp_password(b"").unwrap(), vec![0, 0]);
    assert_eq!(
        bmp_password("aé".as_bytes()).unwrap(),
        vec![0, b'a', 0, 0xe9, 0, 0]
    );
    assert!(bmp_password(&[0xff, 0xfe]).is_err());
}
