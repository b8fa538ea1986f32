"""The trees to ONNX for the binary, checked against LightGBM's own predictions."""
import sys

import numpy as np


def float32_thresholds(lgb, booster):
    """The same trees with every split threshold t lowered to the largest float32 not above it.
    The features are float32, so `x <= t` and `x <= t'` agree for every x and LightGBM's
    predictions do not change; ONNX Runtime compares in float32, where t itself would round to
    the nearest float32, onto a feature's value as often as not, and send it the other way."""
    lines = []
    for line in booster.model_to_string().splitlines():
        if line.startswith("tree_sizes="):
            continue  # byte offsets of the trees as written; read in order without them
        if line.startswith("threshold="):
            ts = []
            for t in line[len("threshold="):].split():
                v = float(t)
                f = np.float32(v)
                if float(f) > v:
                    f = np.nextafter(f, np.float32(-np.inf), dtype=np.float32)
                ts.append(repr(float(f)))
            line = "threshold=" + " ".join(ts)
        lines.append(line)
    return lgb.Booster(model_str="\n".join(lines) + "\n")


def to_onnx(booster, n_features, path):
    import onnx
    from onnxmltools import convert_lightgbm
    from onnxmltools.convert.common.data_types import FloatTensorType

    model = convert_lightgbm(
        booster, initial_types=[("features", FloatTensorType([None, n_features]))],
        target_opset=15, zipmap=False,
    )
    onnx.save(model, str(path))


def onnx_scores(path, X):
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, {"features": np.ascontiguousarray(X, dtype=np.float32)})[0].reshape(-1)


def check(booster, X, path):
    """The exported trees score as LightGBM does: more than 0.1% of rows off by 1e-4 fails."""
    got = onnx_scores(path, X)
    want = booster.predict(X)
    diff = np.abs(got - want)
    off = int((diff > 1e-4).sum())
    if off > 0.001 * len(X):
        raise SystemExit(f"export: the ONNX model differs from LightGBM on {off} of {len(X)} rows "
                         f"(max |diff| {diff.max():.3g})")
    print(f"export: ONNX matches LightGBM on {len(X) - off} of {len(X)} rows", file=sys.stderr)
    return {"rows": len(X), "off": off, "max_diff": float(diff.max()) if len(X) else 0.0}
