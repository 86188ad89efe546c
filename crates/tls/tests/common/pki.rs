//! Test certificates made at run time (rcgen): a CA, leaves it signs, and faulty ones.
#![allow(dead_code)]

use rcgen::{
    BasicConstraints, CertificateParams, CertificateRevocationListParams, DnType,
    ExtendedKeyUsagePurpose, IsCa, Issuer, KeyIdMethod, KeyPair, KeyUsagePurpose, RevocationReason,
    RevokedCertParams, SerialNumber, SignatureAlgorithm,
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
        self.make_leaf(names, alg, from, days, client, None)
    }

    /// An ECDSA P-256 leaf with serial number `serial` (to name in a revocation list).
    pub fn leaf_serial(&self, names: &[&str], client: bool, serial: u64) -> PemIdentity {
        self.make_leaf(
            names,
            &rcgen::PKCS_ECDSA_P256_SHA256,
            1,
            3650,
            client,
            Some(serial),
        )
    }

    /// This CA's revocation list naming `serials`, valid from yesterday for `days` days
    /// (negative: expired).
    pub fn crl(&self, serials: &[u64], days: i64) -> String {
        let now = OffsetDateTime::now_utc();
        let this_update = now - Duration::days(2);
        let params = CertificateRevocationListParams {
            this_update,
            next_update: now + Duration::days(days),
            crl_number: SerialNumber::from(1u64),
            issuing_distribution_point: None,
            revoked_certs: serials
                .iter()
                .map(|&s| RevokedCertParams {
                    serial_number: SerialNumber::from(s),
                    revocation_time: this_update,
                    reason_code: Some(RevocationReason::KeyCompromise),
                    invalidity_date: None,
                })
                .collect(),
            key_identifier_method: KeyIdMethod::Sha256,
        };
        let issuer = Issuer::from_params(&self.params, &self.key);
        params.signed_by(&issuer).unwrap().pem().unwrap()
    }

    fn make_leaf(
        &self,
        names: &[&str],
        alg: &'static SignatureAlgorithm,
        from: i64,
        days: i64,
        client: bool,
        serial: Option<u64>,
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
        params.serial_number = serial.map(SerialNumber::from);
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
            ocsp: None,
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
