//! The repository's history as evidence: a checkout without history answers exactly as
//! with every history signal switched off, and one with history finds, and cites, the
//! file a similar past change fixed, though the task's words are not the code's.
mod common;

use common::{embedder, indexed, write};
use iret_retrieve::{run, Corpus, Options, Params, Query};
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn commit(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", message]);
}

/// Five files; none says "instalment" or "customer".
fn sources(r: &Path) {
    write(
        r,
        "billing/invoice.py",
        "def invoice_total(lines):\n    return round(sum(l.amount for l in lines), 2)\n",
    );
    write(
        r,
        "billing/tax.py",
        "def tax_for(amount):\n    return amount * 0.2\n",
    );
    write(
        r,
        "net/throttle.py",
        "def throttle(max_requests):\n    return max_requests\n",
    );
    write(
        r,
        "util/dates.py",
        "def format_date(d):\n    return d.isoformat()\n",
    );
    write(
        r,
        "parse/tokens.py",
        "class TokenParser:\n    def parse(self, text):\n        return text.split()\n",
    );
}

fn no_history() -> Params {
    Params {
        history_messages: 0.0,
        history_similar: 0.0,
        history_fixes: 0.0,
        ..Params::default()
    }
}

/// (path, relevance, reason) of every evaluated file, in order.
fn answer(corpus: &Corpus, task: &str, params: Params) -> Vec<(String, f32, String)> {
    let opts = Options {
        params,
        ..Options::default()
    };
    run(corpus, &embedder(), &Query::new(task), &opts)
        .unwrap()
        .evaluated
        .into_iter()
        .map(|e| (e.path, e.relevance, e.reason))
        .collect()
}

const TASK: &str = "Totals come out a cent off when a customer pays in instalments";

#[test]
fn a_checkout_without_history_answers_exactly_as_before() {
    let src = tempfile::tempdir().unwrap();
    sources(src.path());
    let (_idx, corpus) = indexed(src.path());
    assert!(corpus.index.history.is_empty());
    assert!(corpus.index.history.head.is_none());
    assert!(corpus.facts.history.is_empty());
    for task in [
        TASK,
        "throttle the requests",
        "TokenParser.parse splits on spaces",
    ] {
        assert_eq!(
            answer(&corpus, task, Params::default()),
            answer(&corpus, task, no_history()),
            "{task}"
        );
    }
}

#[test]
fn a_similar_past_fix_points_at_its_file_and_is_cited() {
    let src = tempfile::tempdir().unwrap();
    let r = src.path();
    git(r, &["init", "-q"]);
    sources(r);
    commit(r, "Initial import");
    write(r, "billing/invoice.py", "def invoice_total(lines):\n    return round(sum(l.amount for l in lines), 2)\n\n\ndef split(total, n):\n    return [round(total / n, 2)] * n\n");
    commit(r, "Fix rounding of instalment payments for a customer");
    write(
        r,
        "util/dates.py",
        "def format_date(d):\n    return d.isoformat()[:10]\n",
    );
    commit(r, "Show dates without the time of day");
    let (_idx, corpus) = indexed(r);
    assert_eq!(corpus.index.history.commits.len(), 3);
    assert_eq!(
        corpus.facts.history.commits_of(0),
        2,
        "invoice.py: import and fix"
    );

    let with = answer(&corpus, TASK, Params::default());
    let (path, _, reason) = &with[0];
    assert_eq!(path, "billing/invoice.py");
    assert!(
        reason.contains("changed in 'Fix rounding of instalment payments for a customer'"),
        "{reason}"
    );
    let without = answer(&corpus, TASK, no_history());
    assert!(without.iter().all(|(_, _, r)| !r.contains("changed in")));
}

#[test]
fn an_issue_number_the_task_refers_to_points_at_what_its_commit_changed() {
    let src = tempfile::tempdir().unwrap();
    let r = src.path();
    git(r, &["init", "-q"]);
    sources(r);
    commit(r, "Initial import");
    write(
        r,
        "util/dates.py",
        "def format_date(d):\n    return d.isoformat()[:10]\n",
    );
    commit(r, "Fix #6461: keep the day only (#6470)");
    let (_idx, corpus) = indexed(r);
    let task = "#6461 had unintended consequences";
    let on = Params {
        history_refs: 0.5,
        ..Params::default()
    };
    let with = answer(&corpus, task, on);
    let at = |a: &[(String, f32, String)]| a.iter().position(|(p, _, _)| p == "util/dates.py");
    let (_, _, reason) = &with[at(&with).unwrap()];
    assert!(reason.contains("changed in 'Fix #6461"), "{reason}");
    // Off by default: the number alone points nowhere, and the file stands lower.
    let off = answer(&corpus, task, Params::default());
    assert!(
        off.iter().all(|(_, _, r)| !r.contains("Fix #6461")),
        "{off:?}"
    );
    assert!(
        at(&with) < at(&off).or(Some(usize::MAX)),
        "{with:?} {off:?}"
    );
}
