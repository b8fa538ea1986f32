"""The kinds of training task, each a folder of tables under `<data>/tables/<kind>/`.

A kind is known from where its tables came from; the model never reads it (what it can read of
a task's kind comes from the text: the `task_*` features)."""

# kind -> what it is; the order is the report's.
KINDS = {
    "commit": "a commit message -> the non-test source files it changed (mined histories)",
    "symbol": "a declared name -> the files declaring it (mined repositories' HEADs)",
    "semble": "a question about code -> the files that answer it (semble's benchmark)",
    "vocab": "a task in words the code does not use -> its files (vocab-dev)",
    "swebench": "an issue report -> the files its fix changed (swebench-dev)",
}
# Kinds whose tasks are judged with every target (relevant and secondary) as gold; the rest
# are file-localisation tasks (found at k when every gold file is in the top k).
QUESTION_KINDS = {"semble", "vocab"}


def check(kind):
    if kind not in KINDS:
        raise SystemExit(f"unknown task kind {kind!r} (known: {', '.join(KINDS)})")
    return kind


def parse_weights(specs):
    """`--kind-weight semble=3` (repeatable) -> {kind: int}; every kind defaults to 1."""
    weights = {k: 1 for k in KINDS}
    for spec in specs or []:
        kind, _, value = spec.partition("=")
        check(kind)
        try:
            weights[kind] = int(value)
        except ValueError:
            raise SystemExit(f"--kind-weight {spec!r}: the weight is a whole number of copies")
        if weights[kind] < 0:
            raise SystemExit(f"--kind-weight {spec!r}: the weight is not negative")
    return weights
