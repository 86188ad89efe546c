pub mod pki;
pub mod probe;
