//! Connecting to a server, with TLS as the URL's `sslmode` says, in
//! libpq's words (tooling.md: `disable`, `require`, `verify-full`; and
//! `prefer`, `verify-ca`), through rustls:
//!
//! | `sslmode` | TLS | the server's certificate |
//! | --- | --- | --- |
//! | `disable` | never | — |
//! | `prefer` (no `sslmode`) | when the server offers it | not checked |
//! | `require` | always | not checked, unless `sslrootcert` names a CA (then as `verify-ca`) |
//! | `verify-ca` | always | signed by `sslrootcert`'s CA (else the Mozilla roots) |
//! | `verify-full` | always | that, and issued for the host connected to |

use std::sync::Arc;
use std::time::Duration;

use postgres::config::SslMode as Mode;
use postgres::{Client, NoTls};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

/// How long connecting may take before it is given up.
const CONNECT_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// A URL's TLS settings, and the URL without them (the client reads the
/// rest).
#[derive(Debug, PartialEq)]
struct Settings {
    url: String,
    mode: SslMode,
    root_cert: Option<String>,
}

fn settings(url: &str) -> Result<Settings, String> {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, query),
        None => (url, ""),
    };
    let mut mode = SslMode::Prefer;
    let mut root_cert = None;
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "sslmode" => {
                mode = match value {
                    "disable" => SslMode::Disable,
                    "allow" | "prefer" => SslMode::Prefer,
                    "require" => SslMode::Require,
                    "verify-ca" => SslMode::VerifyCa,
                    "verify-full" => SslMode::VerifyFull,
                    other => {
                        return Err(format!(
                    "sslmode `{other}` is none of disable, prefer, require, verify-ca, verify-full"
                ))
                    }
                }
            }
            "sslrootcert" => root_cert = Some(unescape(value)),
            _ => kept.push(pair),
        }
    }
    let url = match kept.is_empty() {
        true => base.to_string(),
        false => format!("{base}?{}", kept.join("&")),
    };
    Ok(Settings {
        url,
        mode,
        root_cert,
    })
}

/// A URL's percent-escapes undone (`%2F` → `/`).
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).and_then(|&b| hex(b)),
            bytes.get(i + 2).and_then(|&b| hex(b)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A connection to the server at `url`; why not, in the server's or the
/// TLS library's words (never the URL).
pub fn connect(url: &str) -> Result<Client, String> {
    let settings = settings(url)?;
    let mut config: postgres::Config = settings
        .url
        .parse()
        .map_err(|e| format!("its URL cannot be read: {e}"))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_WAIT);
    }
    config.application_name("hql");
    let said = |e: postgres::Error| super::said(&e);
    if settings.mode == SslMode::Disable {
        config.ssl_mode(Mode::Disable);
        return config.connect(NoTls).map_err(said);
    }
    config.ssl_mode(match settings.mode {
        SslMode::Prefer => Mode::Prefer,
        _ => Mode::Require,
    });
    let tls = client_config(settings.mode, settings.root_cert.as_deref())?;
    config.connect(MakeRustlsConnect::new(tls)).map_err(said)
}

fn client_config(mode: SslMode, root_cert: Option<&str>) -> Result<ClientConfig, String> {
    // ring's provider: it builds with the C compiler alone (aws-lc-rs,
    // which adds post-quantum key exchange, needs CMake), and rustls marks
    // it deprecated only for lacking that exchange.
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let roots = || -> Result<Arc<RootCertStore>, String> {
        let mut roots = RootCertStore::empty();
        match root_cert {
            Some(path) => {
                let certs = CertificateDer::pem_file_iter(path)
                    .map_err(|e| format!("sslrootcert {path} cannot be read: {e}"))?;
                for cert in certs {
                    let cert = cert.map_err(|e| format!("sslrootcert {path}: {e}"))?;
                    roots
                        .add(cert)
                        .map_err(|e| format!("sslrootcert {path}: {e}"))?;
                }
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        Ok(Arc::new(roots))
    };
    let verifier = |roots| {
        WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(|e| e.to_string())
    };
    let checks = match (mode, root_cert) {
        (SslMode::VerifyFull, _) => Check::Full(verifier(roots()?)?),
        (SslMode::VerifyCa, _) | (SslMode::Require, Some(_)) => Check::Ca(verifier(roots()?)?),
        _ => Check::None(provider),
    };
    Ok(builder
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(checks))
        .with_no_client_auth())
}

/// What is checked of the server's certificate.
#[derive(Debug)]
enum Check {
    /// Nothing (`prefer`, `require`): the connection is encrypted, the
    /// server not authenticated, as libpq does.
    None(Arc<rustls::crypto::CryptoProvider>),
    /// Its chain to a trusted root (`verify-ca`), whatever host it names.
    Ca(Arc<WebPkiServerVerifier>),
    /// Its chain and its host (`verify-full`).
    Full(Arc<WebPkiServerVerifier>),
}

impl Check {
    /// A handshake's signature checked, whatever is checked of the
    /// certificate: the server must hold the key it presents.
    fn signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
        tls13: bool,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        match (self, tls13) {
            (Check::None(p), false) => rustls::crypto::verify_tls12_signature(
                message,
                cert,
                dss,
                &p.signature_verification_algorithms,
            ),
            (Check::None(p), true) => rustls::crypto::verify_tls13_signature(
                message,
                cert,
                dss,
                &p.signature_verification_algorithms,
            ),
            (Check::Ca(v) | Check::Full(v), false) => v.verify_tls12_signature(message, cert, dss),
            (Check::Ca(v) | Check::Full(v), true) => v.verify_tls13_signature(message, cert, dss),
        }
    }
}

impl ServerCertVerifier for Check {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self {
            Check::None(_) => Ok(ServerCertVerified::assertion()),
            Check::Full(v) => {
                v.verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
            }
            Check::Ca(v) => {
                match v.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
                    Err(rustls::Error::InvalidCertificate(
                        CertificateError::NotValidForName
                        | CertificateError::NotValidForNameContext { .. },
                    )) => Ok(ServerCertVerified::assertion()),
                    other => other,
                }
            }
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.signature(message, cert, dss, false)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.signature(message, cert, dss, true)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        match self {
            Check::None(p) => p.signature_verification_algorithms.supported_schemes(),
            Check::Ca(v) | Check::Full(v) => v.supported_verify_schemes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_and_sslrootcert_are_taken_from_the_url() {
        let s = settings(
            "postgresql://u@h/d?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem&application_name=x",
        )
        .unwrap();
        assert_eq!(s.url, "postgresql://u@h/d?application_name=x");
        assert_eq!(s.mode, SslMode::VerifyFull);
        assert_eq!(s.root_cert.as_deref(), Some("/tmp/ca.pem"));
        let s = settings("postgresql://u@h/d").unwrap();
        assert_eq!(
            (s.url.as_str(), s.mode),
            ("postgresql://u@h/d", SslMode::Prefer)
        );
        assert_eq!(
            settings("postgresql://h/d?sslmode=disable").unwrap().mode,
            SslMode::Disable
        );
        let e = settings("postgresql://h/d?sslmode=sometimes").unwrap_err();
        assert!(e.contains("sslmode `sometimes`"), "{e}");
    }
}
