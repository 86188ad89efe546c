//! Test certificates made at run time (rcgen): a CA, leaves it signs, and faulty ones.
#![allow(dead_code)]

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SignatureAlgorithm,
};
use time::{Duration, OffsetDateTime};

use netloop_tls::PemIdentity;

pub struct Ca {
    pub pem: String,
    params: CertificateParams,
    key: KeyPair,
}

impl Ca {
    pub fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).unwrap();
        Ca {
            pem: cert.pem(),
            params,
            key,
        }
    }

    /// A leaf for `names`, valid from `from` days ago for `days` days.
    pub fn leaf_with(
        &self,
        names: &[&str],
        alg: &'static SignatureAlgorithm,
        from: i64,
        days: i64,
        client: bool,
    ) -> PemIdentity {
        let key = KeyPair::generate_for(alg).unwrap();
        let mut params =
            CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .unwrap();
        params.distinguished_name.push(
            DnType::CommonName,
            names.first().copied().unwrap_or("client"),
        );
        let now = OffsetDateTime::now_utc();
        params.not_before = now - Duration::days(from);
        params.not_after = now - Duration::days(from) + Duration::days(days);
        params.extended_key_usages = vec![if client {
            ExtendedKeyUsagePurpose::ClientAuth
        } else {
            ExtendedKeyUsagePurpose::ServerAuth
        }];
        let issuer = Issuer::from_params(&self.params, &self.key);
        let cert = params.signed_by(&key, &issuer).unwrap();
        PemIdentity {
            chain: cert.pem().into_bytes(),
            key: key.serialize_pem().into_bytes(),
        }
    }

    /// An ECDSA P-256 server leaf for `names`, valid now.
    pub fn leaf(&self, names: &[&str]) -> PemIdentity {
        self.leaf_with(names, &rcgen::PKCS_ECDSA_P256_SHA256, 1, 3650, false)
    }

    pub fn client(&self, name: &str) -> PemIdentity {
        self.leaf_with(&[name], &rcgen::PKCS_ECDSA_P256_SHA256, 1, 3650, true)
    }

    pub fn expired(&self, names: &[&str]) -> PemIdentity {
        self.leaf_with(names, &rcgen::PKCS_ECDSA_P256_SHA256, 400, 30, false)
    }
}
