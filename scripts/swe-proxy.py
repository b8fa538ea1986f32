#!/usr/bin/env python3
"""A PROXY of the SWE-bench dev set for the repositories whose snapshots are too large to
fetch (django, matplotlib, scikit-learn): each instance's tree is a release from PyPI (the
Django sdist; matplotlib and scikit-learn wheels, their Python sources only, matplotlib's
under lib/ as in its repository) dated before the instance's pull request (by its number;
approximate), NOT its base commit. For A/B comparisons of builds only: its figures are
not the protocol's (../shared/bench/swebench-dev/README.md).

Usage: scripts/swe-proxy.py --bench SETS/swebench-dev --out OUT
then: iret bench --dataset OUT/dataset --mirrors OUT/mirrors --corpora OUT/checkouts \
          --index-root OUT/idx --modes iterative,hybrid
Each release is one commit of a local git repository (OUT/mirrors/<owner>+<name>/repo);
OUT/dataset/repos.json points each instance at its release's commit. Nothing it writes is
ever committed."""
import argparse, json, os, subprocess, sys, tarfile, zipfile, shutil

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--bench", required=True, help="the swebench-dev set (repos.json + annotations/)")
ap.add_argument("--out", required=True)
ARGS = ap.parse_args()
BENCH = ARGS.bench
OUT = ARGS.out
# repo: (package, layout prefix, [(version, kind, first pull request number it serves)]);
# kind: sdist or wheel. The numbers are where each release predates the pull requests.
PLAN = {
 "django/django": ("django", "lib0", [("2.2","sdist",0),("3.0","sdist",12180),("3.1","sdist",13300),("3.2","sdist",14150),("4.0","sdist",15180),("4.1","sdist",15900),("4.2","sdist",16700)]),
 "matplotlib/matplotlib": ("matplotlib", "lib", [("3.5.1","wheel",0),("3.5.2","wheel",23000),("3.6.0","wheel",23913),("3.6.3","wheel",25000),("3.7.0","wheel",25300),("3.7.1","wheel",25900)]),
 "scikit-learn/scikit-learn": ("scikit-learn", "", [("0.19.1","wheel",0),("0.20.0","wheel",12000),("0.21.0","wheel",13700),("0.21.3","wheel",14800),("1.2.0","wheel",25000)]),
}
PYV = {"scikit-learn": {"0.19.1":"36","0.20.0":"37","0.21.0":"37","0.21.3":"37","1.2.0":"310"}, "matplotlib": None}

def download(pkg, ver, kind, d):
    os.makedirs(d, exist_ok=True)
    have = [f for f in os.listdir(d) if ver in f]
    if have: return os.path.join(d, have[0])
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", d, f"{pkg}=={ver}"]
    if kind == "sdist":
        cmd += ["--no-binary", ":all:"]
    else:
        pyv = (PYV.get(pkg) or {}).get(ver, "310")
        cmd += ["--only-binary", ":all:", "--python-version", pyv, "--platform", "manylinux2014_x86_64", "--platform", "manylinux1_x86_64", "--platform", "manylinux2010_x86_64", "--implementation", "cp"]
    subprocess.run(cmd, check=True, capture_output=True)
    have = [f for f in os.listdir(d) if ver in f]
    return os.path.join(d, have[0])

def members(path, kind, prefix):
    """(relative path, bytes) of source files."""
    out = []
    if path.endswith(".whl"):
        z = zipfile.ZipFile(path)
        for n in z.namelist():
            if ".dist-info/" in n or ".data/" in n or n.endswith("/"): continue
            if n.endswith((".so", ".pyd")): continue
            out.append(((prefix + "/" if prefix else "") + n, z.read(n)))
    else:
        t = tarfile.open(path)
        for m in t.getmembers():
            if not m.isfile(): continue
            parts = m.name.split("/", 1)
            if len(parts) < 2: continue
            out.append((parts[1], t.extractfile(m).read()))
    return out

def git(repo, *args, **kw):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, **kw).stdout

def main():
    insts = json.load(open(f"{BENCH}/repos.json"))
    rows = []
    os.makedirs(f"{OUT}/dataset/annotations", exist_ok=True)
    for repo, (pkg, prefix, versions) in PLAN.items():
        work = f"{OUT}/work/{repo.replace('/', '+')}"
        mirror = f"{OUT}/mirrors/{repo.replace('/', '+')}/repo"
        if os.path.isdir(mirror):
            print(repo, "mirror exists"); shas = json.load(open(mirror + ".versions.json"))
        else:
            shutil.rmtree(work, ignore_errors=True); os.makedirs(work)
            git(work, "init", "-q")
            shas = {}
            for i, (ver, kind, _) in enumerate(versions):
                p = download(pkg, ver, kind, f"{OUT}/dl")
                for f in git(work, "ls-files", "-z").split(b"\0"):
                    if f: os.remove(os.path.join(work, f.decode()))
                n = 0
                for rel, data in members(p, kind, prefix if prefix != "lib0" else ""):
                    dest = os.path.join(work, rel)
                    os.makedirs(os.path.dirname(dest), exist_ok=True)
                    open(dest, "wb").write(data); n += 1
                git(work, "add", "-A")
                env = dict(os.environ, GIT_AUTHOR_DATE=f"{2000+i}-01-01T00:00:00", GIT_COMMITTER_DATE=f"{2000+i}-01-01T00:00:00",
                           GIT_AUTHOR_NAME="proxy", GIT_AUTHOR_EMAIL="p@x", GIT_COMMITTER_NAME="proxy", GIT_COMMITTER_EMAIL="p@x")
                subprocess.run(["git", "-C", work, "commit", "-q", "--allow-empty", "-m", f"{pkg} {ver}"], check=True, env=env)
                shas[ver] = git(work, "rev-parse", "HEAD").decode().strip()
                print(repo, ver, n, "files", shas[ver], flush=True)
            os.makedirs(os.path.dirname(mirror), exist_ok=True)
            subprocess.run(["git", "clone", "-q", "--bare", work, mirror], check=True)
            json.dump(shas, open(mirror + ".versions.json", "w"))
        for inst in insts:
            if inst["repo"] != repo: continue
            num = int(inst["name"].rsplit("-", 1)[1])
            ver = [v for v, _, first in versions if num >= first][-1]
            rows.append(dict(inst, revision=shas[ver]))
            shutil.copy(f"{BENCH}/annotations/{inst['name']}.json", f"{OUT}/dataset/annotations/")
    json.dump(rows, open(f"{OUT}/dataset/repos.json", "w"), indent=1)
    print(len(rows), "instances")

main()
