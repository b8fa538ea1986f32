#!/usr/bin/env python3
"""Two branches of one repository pushed to one collection, in turn and at once: does each
checkout's `status --store` hold all of its chunks, and does the collection hold exactly the
union of what each branch pushes alone? (issue #47; docs/journal/benchmarks.md, session 26)

    scripts/store-branches.py --iret target/release/iret --server http://127.0.0.1:8011 \\
        --main CHECKOUT_A --feature CHECKOUT_B [--store-prefix chroma://127.0.0.1:8011/]

Both checkouts are indexed first (`iret index`), so that the pushes are what is timed. The
branches are named by `--store-ref` (main, feature). Collections: `<prefix>alone-main`,
`<prefix>alone-feature` (each branch alone: the reference sets), `<prefix>turn` (main, then
feature, then main again), `<prefix>once` (both at the same time). Record ids are read
from Chroma's HTTP API directly (`--server`, plain HTTP), not through iret.
"""
import argparse
import json
import subprocess
import sys
import time
import urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("--iret", required=True)
ap.add_argument("--server", required=True, help="Chroma's own address, plain HTTP")
ap.add_argument("--main", required=True)
ap.add_argument("--feature", required=True)
ap.add_argument("--store-prefix", default=None, help="the --store address up to the collection")
ap.add_argument("--tag", default="br", help="collection name prefix")
a = ap.parse_args()
prefix = a.store_prefix or a.server.replace("http://", "chroma://") + "/"
DB = "/api/v2/tenants/default_tenant/databases/default_database"


def api(method, path, body=None):
    req = urllib.request.Request(a.server + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.load(r)


def ids(collection):
    cid = api("GET", f"{DB}/collections/{collection}")["id"]
    out, offset = set(), 0
    while True:
        page = api("POST", f"{DB}/collections/{cid}/get",
                   {"include": [], "limit": 5000, "offset": offset})["ids"]
        out.update(page)
        if len(page) < 5000:
            return out
        offset += len(page)


def iret(ref, *args, wait=True):
    cmd = [a.iret, "--store-ref", ref, *args]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.communicate() if wait else p


def push(collection, ref, root):
    return iret(ref, "--store", prefix + collection, "index", root, wait=False)


def finished(p, what):
    out, err = p.communicate()
    if p.returncode != 0:
        sys.exit(f"{what}: {err}")
    return err.strip().splitlines()[-1]


def status(collection, ref, root):
    out, err = iret(ref, "--store", prefix + collection, "status", "--json", root)
    return json.loads(out)["store"]


checkouts = {"main": a.main, "feature": a.feature}
for ref, root in checkouts.items():
    out, err = iret(ref, "index", "-q", root)
alone = {}
for ref, root in checkouts.items():
    c = f"{a.tag}-alone-{ref}"
    print(finished(push(c, ref, root), c))
    alone[ref] = ids(c)
union = alone["main"] | alone["feature"]
print(f"alone: main {len(alone['main'])}, feature {len(alone['feature'])}, "
      f"union {len(union)}, shared {len(alone['main'] & alone['feature'])}")

report = {"alone": {k: len(v) for k, v in alone.items()}, "union": len(union)}
for how in ("turn", "once"):
    c = f"{a.tag}-{how}"
    started = time.time()
    if how == "turn":
        for ref in ("main", "feature", "main"):
            print(finished(push(c, ref, checkouts[ref]), f"{c} {ref}"))
    else:
        ps = [(ref, push(c, ref, checkouts[ref])) for ref in checkouts]
        for ref, p in ps:
            print(finished(p, f"{c} {ref}"))
    seconds = time.time() - started
    held = ids(c)
    st = {ref: status(c, ref, root) for ref, root in checkouts.items()}
    row = {
        "seconds": round(seconds, 1),
        "records": len(held),
        "equals_union": held == union,
        **{f"{ref}_chunks": f"{s['chunks_present']}/{s['chunks']}" for ref, s in st.items()},
    }
    report[how] = row
    print(how, json.dumps(row))
print(json.dumps(report))
