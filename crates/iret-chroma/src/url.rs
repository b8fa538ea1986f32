//! `chroma+https://HOST:PORT[/TENANT/DATABASE]/COLLECTION`: where the store is, how it is
//! reached, and which collection. `chroma+http://` is plain HTTP and `chroma://` its short
//! form. The address never carries a credential: the token comes from the environment
//! ([`crate::Access`]), so it shows neither in `ps` nor in a shell's history.
use crate::StoreError;

const EXPECTED: &str = "expected chroma+https://HOST:PORT[/TENANT/DATABASE][/COLLECTION], or chroma+http:// (chroma:// for short)";
/// Chroma's default tenant and database, used when the address names none.
pub const DEFAULT_TENANT: &str = "default_tenant";
pub const DEFAULT_DATABASE: &str = "default_database";
/// Room left in a collection name for the side collections' suffixes (`.refs`, `.lock`).
const SUFFIX_ROOM: usize = 12;

/// How requests reach the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Http,
    Https,
}

/// A parsed `--store` address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreUrl {
    pub scheme: Scheme,
    pub host: String,
    pub port: u16,
    pub tenant: String,
    pub database: String,
    /// The collection named in the address; `None`: named for the repository, model and
    /// index format ([`collection_name`]).
    pub collection: Option<String>,
}

impl StoreUrl {
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        let shown = redacted(s);
        let bad = |why: &str| StoreError::Url(format!("{shown:?}: {why} ({EXPECTED})"));
        let (scheme, rest) = if let Some(r) = s.strip_prefix("chroma+https://") {
            (Scheme::Https, r)
        } else if let Some(r) = s.strip_prefix("chroma+http://") {
            (Scheme::Http, r)
        } else if let Some(r) = s.strip_prefix("chroma://") {
            (Scheme::Http, r)
        } else {
            return Err(bad("not a chroma address"));
        };
        if rest.contains(['?', '#']) {
            return Err(bad("an address takes no query or fragment: a token goes in IRET_STORE_TOKEN, never in the address"));
        }
        let (authority, path) = match rest.split_once('/') {
            Some((h, p)) => (h, p.trim_end_matches('/')),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(bad("an address carries no credential (it would show in `ps` and in shell history): put the token in IRET_STORE_TOKEN or a file named by IRET_STORE_TOKEN_FILE"));
        }
        let (host, port) = authority.rsplit_once(':').ok_or_else(|| bad("no port"))?;
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port = port
            .parse::<u16>()
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| bad("the port is not a number from 1 to 65535"))?;
        let parts: Vec<&str> = if path.is_empty() {
            Vec::new()
        } else {
            path.split('/').collect()
        };
        let (tenant, database, collection) = match parts.as_slice() {
            [] => (DEFAULT_TENANT, DEFAULT_DATABASE, None),
            [c] => (DEFAULT_TENANT, DEFAULT_DATABASE, Some(*c)),
            [t, d] => (*t, *d, None),
            [t, d, c] => (*t, *d, Some(*c)),
            _ => return Err(bad("too many path segments")),
        };
        for (what, name) in [("tenant", tenant), ("database", database)] {
            if name.len() < 3 || !name.chars().all(ok_char) {
                return Err(bad(&format!(
                    "a {what} name is 3 or more letters, digits, '.', '_' or '-'"
                )));
            }
        }
        if let Some(c) = collection {
            if !valid_name(c) {
                return Err(bad(&format!("a collection name is 3 to {} letters, digits, '.', '_' or '-', starting and ending with a letter or digit", 512 - SUFFIX_ROOM)));
            }
        }
        Ok(Self {
            scheme,
            host: host.to_string(),
            port,
            tenant: tenant.to_string(),
            database: database.to_string(),
            collection: collection.map(str::to_string),
        })
    }

    /// `http(s)://HOST:PORT`, what requests go to.
    pub fn base(&self) -> String {
        let scheme = match self.scheme {
            Scheme::Http => "http",
            Scheme::Https => "https",
        };
        format!("{scheme}://{}:{}", self.host, self.port)
    }

    /// The address of collection `name` as a user writes it (tenant and database shown
    /// only when they are not the defaults).
    pub fn shown(&self, name: &str) -> String {
        let scheme = match self.scheme {
            Scheme::Http => "chroma",
            Scheme::Https => "chroma+https",
        };
        let place = if self.tenant == DEFAULT_TENANT && self.database == DEFAULT_DATABASE {
            String::new()
        } else {
            format!("{}/{}/", self.tenant, self.database)
        };
        format!("{scheme}://{}:{}/{place}{name}", self.host, self.port)
    }

    /// The same server, tenant and database; another collection.
    pub fn with_collection(&self, name: String) -> Self {
        Self {
            collection: Some(name),
            ..self.clone()
        }
    }

    /// The host is this machine (`localhost`, 127.0.0.0/8, `::1`): a token sent there in
    /// clear does not cross a network.
    pub fn is_loopback(&self) -> bool {
        let host = self.host.trim_start_matches('[').trim_end_matches(']');
        host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

/// The address with whatever could be a credential cut out: the user part before `@`,
/// and a query or fragment.
fn redacted(s: &str) -> String {
    let s = s.split(['?', '#']).next().unwrap_or_default();
    let (scheme, rest) = s.split_once("://").unwrap_or(("", s));
    let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("***@{host}"),
        None => authority.to_string(),
    };
    let path = if path.is_empty() {
        String::new()
    } else {
        format!("/{path}")
    };
    if scheme.is_empty() {
        format!("{authority}{path}")
    } else {
        format!("{scheme}://{authority}{path}")
    }
}

fn ok_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// Chroma's rule for collection names, less the room iret's side collections need.
pub fn valid_name(name: &str) -> bool {
    (3..=512 - SUFFIX_ROOM).contains(&name.len())
        && name.chars().all(ok_char)
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// The default collection of a repository: `iret-<repository>-<model>-f<format>`, with
/// what Chroma does not allow in a name replaced by `-`.
pub fn collection_name(repository: &str, model_id: &str, format: u32) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect()
    };
    let repo = clean(repository);
    let repo = repo.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let repo = if repo.is_empty() { "repo" } else { repo };
    let mut name = format!("iret-{repo}-{}-f{format}", clean(model_id));
    name.truncate(512 - SUFFIX_ROOM);
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_host_port_and_collection() {
        let u = StoreUrl::parse("chroma://127.0.0.1:8011/team-index").unwrap();
        assert_eq!(u.base(), "http://127.0.0.1:8011");
        assert_eq!(u.collection.as_deref(), Some("team-index"));
        assert_eq!(u.tenant, DEFAULT_TENANT);
        assert_eq!(u.shown("team-index"), "chroma://127.0.0.1:8011/team-index");
        let u = StoreUrl::parse("chroma://db.internal:8000").unwrap();
        assert_eq!(u.collection, None);
        assert!(!u.is_loopback());
    }

    #[test]
    fn parses_tls_tenant_and_database() {
        let u = StoreUrl::parse("chroma+https://db.team:443/acme/code/main-index").unwrap();
        assert_eq!(u.scheme, Scheme::Https);
        assert_eq!(u.base(), "https://db.team:443");
        assert_eq!((u.tenant.as_str(), u.database.as_str()), ("acme", "code"));
        assert_eq!(u.collection.as_deref(), Some("main-index"));
        assert_eq!(
            u.shown("main-index"),
            "chroma+https://db.team:443/acme/code/main-index"
        );
        let u = StoreUrl::parse("chroma+http://localhost:8000/acme/code").unwrap();
        assert_eq!((u.scheme, u.collection.as_deref()), (Scheme::Http, None));
        assert!(u.is_loopback());
        assert!(StoreUrl::parse("chroma://[::1]:8000")
            .unwrap()
            .is_loopback());
        assert!(StoreUrl::parse("chroma://127.0.0.9:8000")
            .unwrap()
            .is_loopback());
    }

    #[test]
    fn refuses_what_is_not_a_chroma_address() {
        for bad in [
            "http://127.0.0.1:8011",
            "https://127.0.0.1:8011",
            "chroma://127.0.0.1",
            "chroma://:8011",
            "chroma://h:99999",
            "chroma://h:80/x",
            "chroma://h:80/-bad-",
            "chroma://h:80/a/b/c/d",
            "chroma://h:80/t!/db/coll",
        ] {
            let e = StoreUrl::parse(bad).unwrap_err().to_string();
            assert!(e.contains("chroma+https://HOST:PORT"), "{bad}: {e}");
        }
    }

    #[test]
    fn refuses_a_credential_in_the_address_without_echoing_it() {
        for bad in [
            "chroma+https://user:s3cret@db:443/c0l",
            "chroma+https://db:443/c0l?token=s3cret",
        ] {
            let e = StoreUrl::parse(bad).unwrap_err().to_string();
            assert!(e.contains("IRET_STORE_TOKEN"), "{e}");
            assert!(!e.contains("s3cret"), "{e}");
        }
    }

    #[test]
    fn default_names_are_valid() {
        let n = collection_name("my repo!", "sentence-transformers/all-MiniLM-L6-v2", 3);
        assert_eq!(n, "iret-my-repo-sentence-transformers-all-MiniLM-L6-v2-f3");
        assert!(valid_name(&n));
        assert!(valid_name(&collection_name("", "m", 3)));
        assert!(valid_name(&collection_name(&"r".repeat(600), "m", 3)));
    }
}
