"""iret's training tool: the pipeline that makes the learned ranker iret ships.

Each step is a command of `python -m iret_training` (or `iret-train`):

    mine      commit tasks from public histories (`iret bench --history --features`)
    symbols   symbol lookups on the mined repositories' HEADs
    dev       the benchmark sets (semble, vocab-dev, swebench-dev) as training tasks
    train     LightGBM LambdaMART over every kind, repository-grouped cross-validation,
              out-of-fold figures per kind, ONNX export, PROVENANCE
    evaluate  a ranker folder's order over the tables, per kind, beside the rules

Everything mined or built lives in one data folder (`--data`), never in the repository.
"""
