//! Benchmark data in semble's format: `repos.json` and `annotations/<name>.json`.
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Repo {
    pub name: String,
    pub language: String,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub revision: Option<String>,
    #[serde(default)]
    pub benchmark_root: Option<String>,
    /// `owner/name` for localisation datasets (one entry per instance, checked out from
    /// a mirror at `revision`).
    #[serde(default)]
    pub repo: Option<String>,
}

/// A path, optionally with a line span.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Target {
    Path(String),
    Span {
        path: String,
        start_line: usize,
        end_line: usize,
    },
}

impl Target {
    pub fn path(&self) -> &str {
        match self {
            Target::Path(p) | Target::Span { path: p, .. } => p,
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Task {
    pub query: String,
    #[serde(default)]
    pub relevant: Vec<Target>,
    #[serde(default)]
    pub secondary: Vec<Target>,
    #[serde(default)]
    pub category: Option<String>,
    /// Vocabulary-gap sets: `true` when the task avoids the code's words, `false` for a
    /// control that uses them; absent elsewhere.
    #[serde(default)]
    pub vocab_gap: Option<bool>,
}

impl Task {
    /// Relevant then secondary, all with gain 1.
    pub fn targets(&self) -> Vec<&Target> {
        self.relevant.iter().chain(&self.secondary).collect()
    }

    /// `gap` or `control` for a vocabulary-gap set's tasks.
    pub fn group(&self) -> Option<&'static str> {
        self.vocab_gap.map(|g| if g { "gap" } else { "control" })
    }

    /// The category as PROTOCOL.md defines it (`api`/`keyword` kept as given; missing → inferred).
    pub fn category(&self) -> String {
        match &self.category {
            Some(c) => c.clone(),
            None if !self.query.contains(' ') => "symbol".into(),
            None if self.query.to_lowercase().starts_with("how ") => "architecture".into(),
            None => "semantic".into(),
        }
    }
}

pub struct Dataset {
    pub repos: Vec<Repo>,
    pub tasks: Vec<Vec<Task>>,
}

pub fn load(dir: &Path) -> anyhow::Result<Dataset> {
    let repos_path = dir.join("repos.json");
    let repos: Vec<Repo> = serde_json::from_str(
        &std::fs::read_to_string(&repos_path)
            .with_context(|| format!("reading {}", repos_path.display()))?,
    )
    .with_context(|| format!("parsing {}", repos_path.display()))?;
    let mut tasks = Vec::new();
    for r in &repos {
        let p = dir.join("annotations").join(format!("{}.json", r.name));
        let t: Vec<Task> = serde_json::from_str(
            &std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?,
        )
        .with_context(|| format!("parsing {}", p.display()))?;
        tasks.push(t);
    }
    Ok(Dataset { repos, tasks })
}
