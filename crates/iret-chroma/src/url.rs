//! `chroma://HOST:PORT[/COLLECTION]`: where the store is and which collection.
use crate::StoreError;

/// A parsed `--store` address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreUrl {
    /// `http://HOST:PORT`, what requests go to.
    pub base: String,
    /// The collection named in the address; `None`: named for the repository, model and
    /// index format ([`collection_name`]).
    pub collection: Option<String>,
}

impl StoreUrl {
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        let bad = |why: &str| {
            StoreError::Url(format!(
                "{s:?}: {why} (expected chroma://HOST:PORT[/COLLECTION])"
            ))
        };
        let rest = s
            .strip_prefix("chroma://")
            .ok_or_else(|| bad("not a chroma:// address"))?;
        let (host_port, path) = match rest.split_once('/') {
            Some((h, p)) => (h, p.trim_end_matches('/')),
            None => (rest, ""),
        };
        let (host, port) = host_port.rsplit_once(':').ok_or_else(|| bad("no port"))?;
        if host.is_empty() {
            return Err(bad("no host"));
        }
        port.parse::<u16>()
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| bad("the port is not a number from 1 to 65535"))?;
        let collection = if path.is_empty() {
            None
        } else {
            if !valid_name(path) {
                return Err(bad("a collection name is 3 to 512 letters, digits, '.', '_' or '-', starting and ending with a letter or digit"));
            }
            Some(path.to_string())
        };
        Ok(Self {
            base: format!("http://{host}:{port}"),
            collection,
        })
    }
}

/// Chroma's rule for collection names.
pub fn valid_name(name: &str) -> bool {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    (3..=512).contains(&name.len())
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
    name.truncate(512);
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_host_port_and_collection() {
        let u = StoreUrl::parse("chroma://127.0.0.1:8011/team-index").unwrap();
        assert_eq!(u.base, "http://127.0.0.1:8011");
        assert_eq!(u.collection.as_deref(), Some("team-index"));
        let u = StoreUrl::parse("chroma://db.internal:8000").unwrap();
        assert_eq!(u.collection, None);
    }

    #[test]
    fn refuses_what_is_not_a_chroma_address() {
        for bad in [
            "http://127.0.0.1:8011",
            "chroma://127.0.0.1",
            "chroma://:8011",
            "chroma://h:99999",
            "chroma://h:80/x",
            "chroma://h:80/-bad-",
        ] {
            let e = StoreUrl::parse(bad).unwrap_err().to_string();
            assert!(e.contains("chroma://HOST:PORT"), "{bad}: {e}");
        }
    }

    #[test]
    fn default_names_are_valid() {
        let n = collection_name("my repo!", "sentence-transformers/all-MiniLM-L6-v2", 3);
        assert_eq!(n, "iret-my-repo-sentence-transformers-all-MiniLM-L6-v2-f3");
        assert!(valid_name(&n));
        assert!(valid_name(&collection_name("", "m", 3)));
    }
}
