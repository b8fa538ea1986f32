"""The whole pipeline on repositories made here: mine their commits through the real iret
binary, train with repository-grouped folds, export to ONNX, and check that iret, loading
the exported ranker, orders each task's candidates as the model scores them."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from iret_training import export
from iret_training.cli import default_iret
from iret_training.tables import read_table

TOPICS = {
    "auth": ["token", "expiry", "session", "login"],
    "cache": ["entry", "evict", "lookup", "capacity"],
    "parser": ["tokenize", "syntax", "grammar", "expression"],
    "router": ["route", "path", "handler", "match"],
    "logger": ["level", "format", "write", "record"],
    "mailer": ["message", "send", "smtp", "recipient"],
}


def git(repo, *args, env=None):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", **(env or {})})


def make_repo(path, seed):
    """A git repository of six Python modules and a dozen commits, each changing one module
    with a message in its own words."""
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    for name, words in TOPICS.items():
        body = "\n\n".join(f"def {w}_{name}(value):\n    return value  # {w}" for w in words)
        (path / f"{name}.py").write_text(f'"""The {name} of {path.parent.name}."""\n\n{body}\n')
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "Initial modules of the demo application")
    for i in range(12):
        name = list(TOPICS)[int(rng.integers(len(TOPICS)))]
        words = TOPICS[name]
        w = words[int(rng.integers(len(words)))]
        with open(path / f"{name}.py", "a") as f:
            f.write(f"\n\ndef {w}_{name}_v{i}(value):\n    return {w}_{name}(value)\n")
        git(path, "add", ".")
        git(path, "commit", "-q", "-m", f"Handle the {w} case of the {name} module properly")


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    iret = default_iret()
    if iret == "iret" and subprocess.run(["which", "iret"], capture_output=True).returncode:
        pytest.skip("no iret binary (build it: cargo build; or set IRET_BIN)")
    root = tmp_path_factory.mktemp("pipeline")
    mirrors = root / "mirrors"
    for i, repo in enumerate(["demo/alpha", "demo/beta", "demo/gamma"]):
        make_repo(mirrors / repo.replace("/", "+") / "repo", seed=i)
    # A renamed copy of an excluded repository: refused by its history.
    subprocess.run(["git", "clone", "-q", str(mirrors / "demo+gamma" / "repo"),
                    str(mirrors / "demo+delta" / "repo")], check=True)
    (root / "repos.txt").write_text("demo/alpha\ndemo/beta\ndemo/gamma\ndemo/delta\n"
                                    "bench/excluded\n")
    (root / "excluded.txt").write_text("bench/excluded\ndemo/gamma\n")
    data = root / "data"
    env = {**os.environ, "IRET_CACHE_DIR": str(root / "cache"),
           "IRET_EMBED_CACHE": str(root / "cache" / "embeddings.db")}

    def tool(*args):
        run = subprocess.run([sys.executable, "-m", "iret_training", *map(str, args)],
                             capture_output=True, text=True, env=env,
                             cwd=Path(__file__).resolve().parents[1])
        assert run.returncode == 0, run.stderr[-3000:]
        return run

    mined = tool("mine", "--data", data, "--iret", iret, "--mirrors", mirrors,
                 "--excluded", root / "excluded.txt", "--repos", root / "repos.txt",
                 "--commits", 12, "--task-text", "full")
    model = root / "model"
    trained = tool("train", "--data", data, "--model", model, "--folds", 2, "--rounds", 20,
                   "--excluded", root / "excluded.txt",
                   "--param", "min_data_in_leaf=3", "--history-dropout", 0)
    return {"root": root, "data": data, "model": model, "iret": iret, "env": env,
            "mirrors": mirrors, "mined": mined, "trained": trained}


def test_mining_refuses_the_excluded_and_writes_a_table_per_repository(pipeline):
    log = pipeline["mined"].stderr
    assert "demo/gamma: refused (listed in" in log
    assert "demo/delta: refused (shares root commit" in log
    assert "bench/excluded: no mirror" in log
    tables = sorted(p.name for p in (pipeline["data"] / "tables/commit").glob("*.tsv"))
    assert tables == ["demo+alpha.tsv", "demo+beta.tsv"]
    names, rows = read_table(pipeline["data"] / "tables/commit/demo+alpha.tsv", "iterative")
    assert "standing" in names and rows
    assert any(r[3] == 1 for r in rows), "gold files among the candidates"


def test_training_reports_out_of_fold_per_kind_and_exports_a_checked_model(pipeline):
    cv = json.loads((pipeline["model"] / "cv.json").read_text())
    assert set(cv["by_kind"]) == {"commit"}
    assert cv["by_kind"]["commit"]["learned"]["tasks"] >= 10
    assert cv["onnx_check"]["off"] == 0
    manifest = json.loads((pipeline["model"] / "manifest.json").read_text())
    assert "rules_rank" not in manifest["features"] and "rules_score" not in manifest["features"]
    prov = (pipeline["model"] / "PROVENANCE.md").read_text()
    assert "demo/alpha" in prov and "excluded.txt" in prov


def test_iret_orders_candidates_as_the_exported_model_scores_them(pipeline):
    root, model = pipeline["root"], pipeline["model"]
    features, report = root / "learned.tsv", root / "learned.json"
    gd = pipeline["mirrors"] / "demo+alpha" / "repo" / ".git"
    env = {**pipeline["env"], "IRET_RANKER_DIR": str(model)}
    run = subprocess.run([pipeline["iret"], "bench", "--history", str(gd), "--commits", "12",
                          "--modes", "learned", "--corpora", str(root / "co"),
                          "--index-root", str(root / "idx"), "--features", str(features),
                          "--json", str(report)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    manifest = json.loads((model / "manifest.json").read_text())
    names, rows = read_table(features, "learned")
    X = np.asarray([r[4] for r in rows], dtype=np.float32)[:, [names.index(n) for n in
                                                              manifest["features"]]]
    scores = export.onnx_scores(model / "ranker.onnx", X)
    score_of = {(r[0], r[2]): s for r, s in zip(rows, scores)}
    checked = 0
    for inst in json.loads(report.read_text())["runs"]:
        files = next(r["files"] for r in inst["results"] if r["mode"] == "learned")
        s = [score_of[(inst["name"], f)] for f in files if (inst["name"], f) in score_of]
        assert all(x >= y - 1e-6 for x, y in zip(s, s[1:])), (inst["name"], files, s)
        checked += len(s) > 1
    assert checked >= 5
