//! Certificate verification when `rejectUnauthorized` is false: the handshake goes on whatever
//! the peer's chain, but signatures are still checked (the peer must own the key it shows), and
//! the handler verifies the chain strictly afterwards to report `authorized` and the reason
//! (node:tls's `socket.authorized` / `authorizationError`). And verification of the chain
//! alone, when the application judges the server's name (node:tls's `checkServerIdentity`).

use std::sync::Arc;

use crate::capture::STAPLE;

use rustls::client::danger::{ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DistinguishedName};

/// The signature checks of a verifier that wraps a strict one (`self.$field`): delegated
/// whole, so that a peer must own the key it shows whatever else the wrapper forgives. With a
/// second argument, `|wrapper, schemes| ...` narrows the schemes offered (crate::sigalgs).
macro_rules! delegate_signature_checks {
    ($field:tt) => {
        delegate_signature_checks!($field, |_: &Self, all: Vec<::rustls::SignatureScheme>| all);
    };
    ($field:tt, $schemes:expr) => {
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &::rustls::pki_types::CertificateDer<'_>,
            dss: &::rustls::DigitallySignedStruct,
        ) -> Result<::rustls::client::danger::HandshakeSignatureValid, ::rustls::Error> {
            self.$field.verify_tls12_signature(message, cert, dss)
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &::rustls::pki_types::CertificateDer<'_>,
            dss: &::rustls::DigitallySignedStruct,
        ) -> Result<::rustls::client::danger::HandshakeSignatureValid, ::rustls::Error> {
            self.$field.verify_tls13_signature(message, cert, dss)
        }

        fn supported_verify_schemes(&self) -> Vec<::rustls::SignatureScheme> {
            ($schemes)(self, self.$field.supported_verify_schemes())
        }
    };
}
pub(crate) use delegate_signature_checks;

/// Accepts any server chain; delegates signature checks to the strict verifier.
#[derive(Debug)]
pub struct LenientServerVerifier(pub Arc<dyn ServerCertVerifier>);

impl ServerCertVerifier for LenientServerVerifier {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    delegate_signature_checks!(0);
}

/// Verifies a server's chain (trust, validity, revocation) but not its name: webpki checks the
/// name last, after everything else passed, so its name errors alone are forgiven.
#[derive(Debug)]
pub struct ChainOnlyServerVerifier(pub Arc<dyn ServerCertVerifier>);

impl ServerCertVerifier for ChainOnlyServerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    delegate_signature_checks!(0);
}

/// Asks for a client certificate but accepts any (or none); signatures are still checked.
#[derive(Debug)]
pub struct LenientClientVerifier(pub Arc<dyn ClientCertVerifier>);

impl ClientCertVerifier for LenientClientVerifier {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.0.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    delegate_signature_checks!(0);
}

/// Notes the OCSP response the server stapled, which rustls hands to the verifier alone, for
/// the client handshake this thread is feeding (crate::capture), then verifies with the
/// context's verifier (`self.0`).
#[derive(Debug)]
pub(crate) struct StapleRecorder(pub(crate) Arc<dyn ServerCertVerifier>);

impl ServerCertVerifier for StapleRecorder {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if !ocsp_response.is_empty() {
            STAPLE.note(ocsp_response);
        }
        self.0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn root_hint_subjects(&self) -> Option<&[DistinguishedName]> {
        self.0.root_hint_subjects()
    }

    delegate_signature_checks!(0);
}
