//! Include/exclude globs over relative paths, applied before ranking.
use globset::{Glob, GlobSet, GlobSetBuilder};

#[derive(Debug, Clone, Default)]
pub struct Scope {
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
}

impl Scope {
    pub fn new(include: &[String], exclude: &[String]) -> anyhow::Result<Self> {
        Ok(Self {
            include: globs(include)?,
            exclude: globs(exclude)?,
        })
    }

    pub fn allows(&self, path: &str) -> bool {
        self.include.as_ref().is_none_or(|g| g.is_match(path))
            && !self.exclude.as_ref().is_some_and(|g| g.is_match(path))
    }
}

/// A bare name (`auth`, `*.ts`) matches at any depth, like ripgrep's -g; a name without
/// a wildcard also matches everything below it (a folder).
fn globs(patterns: &[String]) -> anyhow::Result<Option<GlobSet>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        let pat = if p.contains('/') {
            p.clone()
        } else {
            format!("**/{p}")
        };
        b.add(Glob::new(&pat).map_err(|e| anyhow::anyhow!("bad glob {p:?}: {e}"))?);
        if !p.contains('*') {
            b.add(Glob::new(&format!("{}/**", pat.trim_end_matches('/')))?);
        }
    }
    Ok(Some(b.build()?))
}
