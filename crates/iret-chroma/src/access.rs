//! What iret shows the store and what it trusts: a token from the environment (never the
//! address or the command line), the header it travels in, and the certificates a
//! `chroma+https://` server must present.
use crate::{StoreError, StoreUrl};
use std::path::PathBuf;

/// A credential. Never printed: its `Debug` shows only that there is one.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(***)")
    }
}

impl Token {
    /// A token as read from a variable or a file: surrounding whitespace (a file's final
    /// newline) dropped; empty or not sendable in a header is an error that does not show it.
    pub fn new(raw: &str, from: &str) -> Result<Self, StoreError> {
        let t = raw.trim();
        if t.is_empty() {
            return Err(StoreError::Access(format!("{from} is empty")));
        }
        if !t.chars().all(|c| c.is_ascii_graphic() || c == ' ') {
            return Err(StoreError::Access(format!(
                "{from} holds characters a header cannot carry (control or non-ASCII characters); the token is not shown"
            )));
        }
        Ok(Self(t.to_string()))
    }

    pub(crate) fn secret(&self) -> &str {
        &self.0
    }
}

/// The header a token travels in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenHeader {
    /// `Authorization: Bearer TOKEN` (a proxy's usual check).
    #[default]
    Bearer,
    /// `X-Chroma-Token: TOKEN` (Chroma's own token authentication, its hosted service).
    ChromaToken,
}

impl TokenHeader {
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "authorization" | "bearer" => Ok(Self::Bearer),
            "x-chroma-token" => Ok(Self::ChromaToken),
            other => Err(StoreError::Access(format!(
                "IRET_STORE_TOKEN_HEADER is {other:?}: expected Authorization (sent as `Authorization: Bearer …`) or X-Chroma-Token"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Bearer => "Authorization",
            Self::ChromaToken => "X-Chroma-Token",
        }
    }

    pub(crate) fn value(self, token: &Token) -> String {
        match self {
            Self::Bearer => format!("Bearer {}", token.secret()),
            Self::ChromaToken => token.secret().to_string(),
        }
    }
}

/// How iret reaches a store: its token (if any), the header for it, the CA bundle a TLS
/// server's certificate must chain to (else the system's trust store), and whether the
/// user allowed a token over plain HTTP to another machine.
#[derive(Debug, Clone, Default)]
pub struct Access {
    pub token: Option<Token>,
    pub header: TokenHeader,
    pub ca: Option<PathBuf>,
    pub token_over_http: bool,
}

impl Access {
    /// From `IRET_STORE_TOKEN` or `IRET_STORE_TOKEN_FILE`, `IRET_STORE_TOKEN_HEADER`,
    /// `IRET_STORE_CA` and `IRET_STORE_ALLOW_TOKEN_OVER_HTTP` (`1`/`true`/`yes`).
    pub fn from_env() -> Result<Self, StoreError> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let token = match (var("IRET_STORE_TOKEN"), var("IRET_STORE_TOKEN_FILE")) {
            (Some(_), Some(_)) => {
                return Err(StoreError::Access(
                    "both IRET_STORE_TOKEN and IRET_STORE_TOKEN_FILE are set: set one".into(),
                ))
            }
            (Some(t), None) => Some(Token::new(&t, "IRET_STORE_TOKEN")?),
            (None, Some(file)) => {
                let text = std::fs::read_to_string(&file).map_err(|e| {
                    StoreError::Access(format!(
                        "cannot read the token file {file} (IRET_STORE_TOKEN_FILE): {e}"
                    ))
                })?;
                Some(Token::new(&text, &format!("the token file {file}"))?)
            }
            (None, None) => None,
        };
        let header = TokenHeader::parse(&var("IRET_STORE_TOKEN_HEADER").unwrap_or_default())?;
        let yes =
            |v: String| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes");
        Ok(Self {
            token,
            header,
            ca: var("IRET_STORE_CA").map(PathBuf::from),
            token_over_http: var("IRET_STORE_ALLOW_TOKEN_OVER_HTTP").is_some_and(yes),
        })
    }

    /// Refuses to send a token in clear across a network, unless the user said so.
    pub fn check(&self, url: &StoreUrl) -> Result<(), StoreError> {
        let plain = url.scheme == crate::Scheme::Http;
        if self.token.is_some() && plain && !url.is_loopback() && !self.token_over_http {
            return Err(StoreError::Access(format!(
                "a token would cross the network in clear to {} (plain HTTP): use chroma+https://, or set IRET_STORE_ALLOW_TOKEN_OVER_HTTP=1 if the network is yours",
                url.host
            )));
        }
        if self.ca.is_some() && plain {
            return Err(StoreError::Access(format!(
                "IRET_STORE_CA is set but {} is plain HTTP: use chroma+https://",
                url.shown(url.collection.as_deref().unwrap_or(""))
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_never_shown() {
        let t = Token::new(" s3cret\n", "IRET_STORE_TOKEN").unwrap();
        assert_eq!(t.secret(), "s3cret");
        assert!(!format!("{t:?}").contains("s3cret"));
        let access = Access {
            token: Some(t),
            ..Access::default()
        };
        assert!(!format!("{access:?}").contains("s3cret"));
        let e = Token::new("s3c\nret", "IRET_STORE_TOKEN")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("s3c"), "{e}");
        assert!(Token::new(" \n", "the token file t").is_err());
    }

    #[test]
    fn headers() {
        let t = Token::new("abc", "x").unwrap();
        assert_eq!(TokenHeader::parse("").unwrap().value(&t), "Bearer abc");
        let h = TokenHeader::parse("X-Chroma-Token").unwrap();
        assert_eq!((h.name(), h.value(&t).as_str()), ("X-Chroma-Token", "abc"));
        assert!(TokenHeader::parse("Cookie").is_err());
    }

    #[test]
    fn a_token_over_plain_http_goes_only_to_this_machine_unless_allowed() {
        let mut access = Access {
            token: Some(Token::new("abc", "x").unwrap()),
            ..Access::default()
        };
        let remote = StoreUrl::parse("chroma://db.team:8000/coll").unwrap();
        let e = access.check(&remote).unwrap_err().to_string();
        assert!(
            e.contains("db.team") && e.contains("chroma+https://"),
            "{e}"
        );
        assert!(access
            .check(&StoreUrl::parse("chroma://127.0.0.1:8000").unwrap())
            .is_ok());
        assert!(access
            .check(&StoreUrl::parse("chroma+https://db.team:443").unwrap())
            .is_ok());
        access.token_over_http = true;
        assert!(access.check(&remote).is_ok());
    }
}
