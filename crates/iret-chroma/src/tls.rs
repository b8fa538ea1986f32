//! TLS for `chroma+https://`: rustls (through ureq), trusting the team's CA bundle
//! (`IRET_STORE_CA`) or else the system's trust store; a certificate that fails is an
//! error naming why, and there is never a fallback to plain HTTP.
use crate::{Access, StoreError};
use std::sync::Arc;
use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig, TlsProvider};

/// The TLS settings of a client with `access`.
pub(crate) fn config(access: &Access) -> Result<TlsConfig, StoreError> {
    let roots = match &access.ca {
        Some(path) => RootCerts::Specific(Arc::new(ca_bundle(path)?)),
        None => RootCerts::PlatformVerifier,
    };
    Ok(TlsConfig::builder()
        .provider(TlsProvider::Rustls)
        .root_certs(roots)
        .build())
}

/// The certificates of a PEM bundle; a file without one is an error.
fn ca_bundle(path: &std::path::Path) -> Result<Vec<Certificate<'static>>, StoreError> {
    let shown = path.display();
    let pem = std::fs::read(path).map_err(|e| {
        StoreError::Access(format!(
            "cannot read the CA bundle {shown} (IRET_STORE_CA): {e}"
        ))
    })?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => {
                return Err(StoreError::Access(format!(
                    "the CA bundle {shown} (IRET_STORE_CA) is not PEM: {e}"
                )))
            }
        }
    }
    if certs.is_empty() {
        return Err(StoreError::Access(format!(
            "the CA bundle {shown} (IRET_STORE_CA) holds no certificate"
        )));
    }
    Ok(certs)
}

/// Why a request failed in TLS, in a user's words; `None` when it was not TLS.
pub(crate) fn failure(e: &ureq::Error) -> Option<String> {
    let tls = match e {
        ureq::Error::Rustls(r) => r,
        ureq::Error::Io(io) => io.get_ref()?.downcast_ref::<rustls::Error>()?,
        ureq::Error::TlsRequired => {
            return Some("the address is https but the request was not".into())
        }
        _ => return None,
    };
    Some(describe(tls))
}

fn describe(e: &rustls::Error) -> String {
    match e {
        rustls::Error::InvalidCertificate(c) => {
            // Matched by name: rustls adds context-carrying variants between releases.
            let kind = format!("{c:?}");
            let why = if kind.starts_with("Expired") {
                "its certificate has expired"
            } else if kind.starts_with("NotValidYet") {
                "its certificate is not valid yet"
            } else if kind.starts_with("NotValidForName") {
                "its certificate is not for this host name"
            } else if kind.starts_with("UnknownIssuer") || kind.starts_with("BadSignature") {
                // BadSignature: it names a trusted authority that did not sign it.
                "its certificate is not signed by an authority iret trusts (a team's own CA goes in IRET_STORE_CA)"
            } else if kind.starts_with("Revoked") {
                "its certificate is revoked"
            } else if kind.contains("CaUsedAsEndEntity") {
                "it presents a CA certificate as its own: the server needs a certificate for its \
                 name signed by that CA (the CA itself goes in IRET_STORE_CA)"
            } else {
                return format!("its certificate is refused: {e}");
            };
            why.to_string()
        }
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => {
            format!("it does not answer in TLS on this port (plain HTTP? then chroma+http://): {e}")
        }
        other => format!("the TLS handshake failed: {other}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_ca_served_as_the_servers_own_certificate_is_said_in_words() {
        let err =
            rustls::Error::InvalidCertificate(rustls::CertificateError::Other(rustls::OtherError(
                std::sync::Arc::new(std::io::Error::other("CaUsedAsEndEntity")),
            )));
        let why = super::describe(&err);
        assert!(
            why.contains("presents a CA certificate as its own"),
            "{why}"
        );
        assert!(!why.contains("OtherError"), "{why}");
    }
}
