import numpy as np
import pytest

from iret_training import folds, kinds, tables
from iret_training.metrics import groups_of, metrics, ndcg10


def test_groups_are_the_runs_of_one_task():
    assert groups_of(["a", "a", "b", "c", "c"]) == [(0, 2), (2, 3), (3, 5)]
    assert groups_of([]) == []


def test_acc_needs_every_gold_file_and_a_missing_one_is_a_miss():
    y = np.array([0, 1, 1, 1, 0])
    score = np.array([3.0, 2.0, 1.0, 5.0, 4.0])
    m = metrics([(0, 3), (3, 5)], y, score, [2, 2])
    # task 1: gold at ranks 2 and 3 -> found at 3; task 2: one of its two gold files absent.
    assert (m["acc@1"], m["acc@3"], m["acc@5"]) == (0.0, 50.0, 50.0)
    assert ndcg10([1, 0], 1) == 1.0 and ndcg10([0, 1], 1) < 1.0


def test_folds_keep_a_repository_whole_and_spread_every_kind():
    repos = ["s1", "s2", "s3", "s4", "s5"] + [f"m{i}" for i in range(20)] + ["s1"]
    kinds_ = ["semble"] * 5 + ["commit"] * 20 + ["vocab"]
    fold_of = folds.assign(repos, kinds_, 5)
    assert set(fold_of) == set(repos)
    assert sorted(fold_of[r] for r in ["s1", "s2", "s3", "s4", "s5"]) == [0, 1, 2, 3, 4]
    assert folds.assign(repos, kinds_, 5) == fold_of, "seeded"


def test_kind_weights_are_parsed_and_checked():
    assert kinds.parse_weights(["semble=3"])["semble"] == 3
    assert kinds.parse_weights([])["commit"] == 1
    with pytest.raises(SystemExit):
        kinds.parse_weights(["nosuch=2"])
    with pytest.raises(SystemExit):
        kinds.parse_weights(["semble=x"])


def write_table(path, rows, names=("cos_best", "rules_rank", "language")):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        f.write("\t".join(tables.FIXED + list(names)) + "\n")
        for r in rows:
            f.write("\t".join(map(str, r)) + "\n")


def test_tables_of_several_kinds_keep_their_tasks_apart(tmp_path):
    write_table(tmp_path / "tables/semble/semble.tsv", [
        ("gin:0", "gin-gonic/gin", "iterative", "a.go", 1, 0.5, 1, 3),
        ("gin:0", "gin-gonic/gin", "iterative", "b.go", 1, 0.4, 2, 3),
        ("gin:0", "gin-gonic/gin", "iterative", "c.go", 0, 0.3, 3, 3),
        ("gin:0", "gin-gonic/gin", "learned", "c.go", 0, 0.3, 3, 3),
    ])
    write_table(tmp_path / "tables/vocab/vocab.tsv", [
        ("gin:0", "gin-gonic/gin", "iterative", "a.go", 0, "nan", 1, 3),
    ])
    t = tables.load(tmp_path)
    assert list(t.kind) == ["semble", "vocab"], "the same task name in two kinds: two tasks"
    assert list(t.gold) == [2, 1], "a question's gold: its gold candidates"
    assert len(t.y) == 4, "only the iterative mode's rows"
    assert np.isnan(t.X[3, 0])


def test_a_table_of_other_columns_is_refused(tmp_path):
    write_table(tmp_path / "tables/commit/a.tsv", [("t", "o/a", "iterative", "x", 1, 1, 1, 1)])
    write_table(tmp_path / "tables/commit/b.tsv", [("u", "o/b", "iterative", "x", 1, 1, 1)],
                names=("cos_best", "rules_rank"))
    with pytest.raises(SystemExit, match="other feature columns"):
        tables.load(tmp_path)


def synthetic_tables(root, rng):
    """Two kinds over six repositories: gold candidates have the higher cos_best."""
    names = ("cos_best", "rules_rank", "rules_score", "language")
    for kind, repos in (("commit", ["o/a", "o/b", "o/c", "o/d"]), ("semble", ["q/e", "q/f"])):
        rows = []
        for r in repos:
            for task in range(30):
                gold = int(rng.integers(8))
                for c in range(8):
                    cos = rng.normal(0.6 if c == gold else 0.4, 0.1)
                    rows.append((f"{r}#{task}", r, "iterative", f"f{c}.py", int(c == gold),
                                 round(cos, 4), c + 1, 1.0, 1))
        write_table(root / f"tables/{kind}/{kind}.tsv", rows, names=names)


def test_training_tunes_kind_weights_out_of_fold_and_learns_the_signal(tmp_path):
    from iret_training import cli, train

    synthetic_tables(tmp_path / "data", np.random.default_rng(0))
    a = cli.parser().parse_args(["train", "--data", str(tmp_path / "data"), "--no-export",
                                 "--folds", "3", "--rounds", "20", "--param",
                                 "min_data_in_leaf=5", "--tune-kind-weights", "semble"])
    cv = train.run(a)
    assert [t["weights"]["semble"] for t in cv["kind_weight_search"]] == [1, 2, 4]
    assert cv["kind_weight"]["semble"] in (1, 2, 4)
    assert "rules_rank" not in cv["features"], "the rules' verdicts are left out by default"
    for kind in ("commit", "semble"):
        # The rules' order here is the candidates' own (no signal); the trees read cos_best.
        assert cv["by_kind"][kind]["learned"]["acc@1"] > cv["by_kind"][kind]["rules"]["acc@1"] + 20


def test_online_summary_is_the_mean_per_repository_then_over_them():
    from iret_training.evaluate import repo_id, summary

    def r(mode, ndcg, group=None, strong=(1, 2, 1, 2)):
        return {"mode": mode, "ndcg10": ndcg, "group": group, "strong_hits": strong[0],
                "strong_files": strong[1], "targets_strong": strong[2], "targets": strong[3]}

    runs = [{"language": "go", "results": [r("learned", 1.0, "gap"), r("learned", 0.0, "gap"),
                                           r("learned", 1.0, "control")]},
            {"language": "rust", "results": [r("learned", 0.25, "gap", (0, 1, 0, 3))]}]
    s = summary(runs)["learned"]
    assert s["gap"] == round((0.5 + 0.25) / 2, 4)
    assert s["all"] == round((2 / 3 + 0.25) / 2, 4)
    assert s["languages"] == {"go": round(2 / 3, 4), "rust": 0.25}
    assert s["strong_that_are_targets"] == round(3 / 7, 3)
    assert s["targets_reaching_0.7"] == round(3 / 9, 3)
    assert repo_id({"name": "gin", "url": "https://github.com/gin-gonic/gin.git"}) == "gin-gonic/gin"
    assert repo_id({"name": "local"}) == "local"
