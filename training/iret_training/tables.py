"""The training tables: one row per loop candidate, as `iret bench --features` writes them
(the task, its repository, the mode, the file, whether it is gold, then every feature by name),
under `<data>/tables/<kind>/*.tsv`, each beside the bench's JSON report."""
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .kinds import KINDS, QUESTION_KINDS
from .metrics import groups_of, metrics

FIXED = ["task", "repo", "mode", "path", "label"]


def tables_dir(data, kind):
    return Path(data) / "tables" / kind


@dataclass
class Tables:
    """Every row of the kinds read, tasks contiguous."""
    names: list
    X: np.ndarray
    y: np.ndarray
    tasks: np.ndarray
    repos: np.ndarray
    paths: np.ndarray
    groups: list = field(default_factory=list)
    # Per task (group): its kind, its repository, how many gold files it has.
    kind: np.ndarray = None
    repo: np.ndarray = None
    gold: np.ndarray = None

    def col(self, name):
        return self.names.index(name)

    def task_ids(self, kinds=None):
        """Indexes of the tasks (groups) of these kinds (all by default)."""
        return [i for i in range(len(self.groups)) if kinds is None or self.kind[i] in kinds]

    def trainable(self):
        """The tasks with a gold candidate (the others teach nothing, but count as misses)."""
        return [i for i, (a, b) in enumerate(self.groups) if self.y[a:b].any()]

    def rules(self):
        """The rules' order as a score: higher first."""
        return -self.X[:, self.col("rules_rank")]

    def side_by_side(self, score, which):
        """The figures of the tasks `which` ordered by `score`, beside the rules'."""
        g = [self.groups[i] for i in which]
        c = [self.gold[i] for i in which]
        return {"learned": metrics(g, self.y, score, c),
                "rules": metrics(g, self.y, self.rules(), c)}


def read_table(path, mode):
    """(feature names, rows) of one table: rows as (task, repo, path, label, features)."""
    rows = []
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        if header[: len(FIXED)] != FIXED:
            raise SystemExit(f"{path}: not a table of `iret bench --features` (header {header[:5]})")
        names = header[len(FIXED):]
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) != len(header):
                raise SystemExit(f"{path}: a row of {len(p)} columns, the header has {len(header)}")
            if p[2] != mode:
                continue
            rows.append((p[0], p[1], p[3], int(p[4]), [float(x) for x in p[len(FIXED):]]))
    return names, rows


def gold_counts(folder):
    """{task name: number of gold files} from the bench reports (`--json`) of a folder of
    localisation tables; question tasks count their gold candidates instead."""
    gold = {}
    for path in Path(folder).glob("*.gold.json"):
        gold.update(json.loads(path.read_text()))
    for path in Path(folder).glob("*.json"):
        if path.name == "provenance.json" or path.name.endswith(".gold.json"):
            continue
        try:
            doc = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        for run in doc.get("runs", []):
            if "gold" in run and "name" in run:
                gold[run["name"]] = len(run["gold"])
    return gold


def load(data, kinds=None, mode="iterative"):
    """Every table of `kinds` (default: every kind with tables) under `data`."""
    names = None
    X, y, tasks, repos, paths, task_kind, gold_of = [], [], [], [], [], [], []
    for kind in kinds or KINDS:
        folder = tables_dir(data, kind)
        files = sorted(folder.glob("*.tsv"))
        if not files:
            continue
        counts = gold_counts(folder)
        for path in files:
            cols, rows = read_table(path, mode)
            if names is None:
                names = cols
            elif cols != names:
                raise SystemExit(f"{path} has other feature columns than the first table read: "
                                 "run it through this build of iret again")
            start = len(tasks)
            for task, repo, p, label, feats in rows:
                # A task id names its kind, so two kinds' tasks never merge.
                tasks.append(f"{kind}|{task}")
                repos.append(repo)
                paths.append(p)
                y.append(label)
                X.append(feats)
            for a, b in groups_of(tasks[start:]):
                name = tasks[start + a].split("|", 1)[1]
                task_kind.append(kind)
                n = counts.get(name)
                if n is None or kind in QUESTION_KINDS:
                    n = max(1, sum(y[start + a:start + b]))
                gold_of.append(n)
    if names is None:
        raise SystemExit(f"no table under {Path(data) / 'tables'} (run `iret-train mine`, "
                         "`symbols` or `dev` first)")
    t = Tables(names=names, X=np.asarray(X, dtype=np.float32), y=np.asarray(y, dtype=np.int32),
               tasks=np.asarray(tasks), repos=np.asarray(repos), paths=np.asarray(paths))
    t.groups = groups_of(t.tasks)
    t.kind = np.asarray(task_kind)
    t.repo = np.asarray([t.repos[a] for a, _ in t.groups])
    t.gold = np.asarray(gold_of)
    assert len(t.kind) == len(t.groups), "a task's rows are not contiguous in its table"
    print(f"tables: {len(t.groups)} tasks, {len(t.y)} rows, "
          + ", ".join(f"{k} {int((t.kind == k).sum())}" for k in KINDS if (t.kind == k).any()),
          file=sys.stderr)
    return t
