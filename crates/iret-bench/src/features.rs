//! `iret bench --features FILE`: every candidate of the loop with its features, one
//! tab-separated row each, for training and validating a ranker on the same features
//! iret serves with (`iret_retrieve::ranking::Features`). Columns: the task, its
//! repository, the mode, the file, whether it is a gold file (`label`), then each
//! feature by name; a missing value is `nan`.
use iret_retrieve::ranking::{Candidate, Features};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;

pub struct FeatureSink {
    out: Mutex<BufWriter<std::fs::File>>,
}

impl FeatureSink {
    /// Creates `path` (replacing it) with the header row.
    pub fn create(path: &Path) -> anyhow::Result<Self> {
        let file = std::fs::File::create(path)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        let mut out = BufWriter::new(file);
        writeln!(out, "{}", header())?;
        Ok(Self {
            out: Mutex::new(out),
        })
    }

    /// One row per candidate of task `task`.
    pub fn write(
        &self,
        task: &str,
        repo: &str,
        mode: &str,
        gold: &[String],
        candidates: &[Candidate],
    ) -> anyhow::Result<()> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        for c in candidates {
            writeln!(out, "{}", row(task, repo, mode, gold, c))?;
        }
        out.flush()?;
        Ok(())
    }
}

fn header() -> String {
    let mut cols = vec!["task", "repo", "mode", "path", "label"];
    cols.extend(Features::NAMES);
    cols.join("\t")
}

/// Tabs and newlines cannot occur in a field (a path with one has them replaced).
fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

fn row(task: &str, repo: &str, mode: &str, gold: &[String], c: &Candidate) -> String {
    let label = u8::from(gold.contains(&c.path));
    let mut fields = vec![
        clean(task),
        clean(repo),
        clean(mode),
        clean(&c.path),
        label.to_string(),
    ];
    fields.extend(c.features.row().iter().map(|v| {
        if v.is_nan() {
            "nan".to_string()
        } else {
            format!("{v}")
        }
    }));
    fields.join("\t")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_has_every_column_of_the_header_and_labels_gold_files() {
        let c = Candidate {
            file: 3,
            path: "src/a\tb.rs".into(),
            features: Features {
                cos_best: 0.25,
                relevance: f32::NAN,
                ..Features::default()
            },
        };
        let line = row("t1", "o/r", "iterative", &["src/a\tb.rs".into()], &c);
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), header().split('\t').count());
        assert_eq!(cols[3], "src/a b.rs");
        assert_eq!(cols[4], "1", "the gold path is compared before cleaning");
        let line = row("t1", "o/r", "iterative", &["src/x.rs".into()], &c);
        assert_eq!(line.split('\t').nth(4), Some("0"));
        let gold = Candidate {
            path: "src/x.rs".into(),
            ..c
        };
        let line = row("t1", "o/r", "iterative", &["src/x.rs".into()], &gold);
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols[4], "1");
        let at = |name: &str| 5 + Features::NAMES.iter().position(|n| *n == name).unwrap();
        assert_eq!(cols[at("cos_best")], "0.25");
        assert_eq!(cols[at("relevance")], "nan");
    }
}
