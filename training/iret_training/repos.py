"""Git mirrors (`<mirrors>/<owner>+<name>/repo`, as the `fetch` tool brings them) and the rule
that no benchmark repository is ever trained on (`excluded-repos.txt`), checked by name and by
history: a repository sharing a root commit with an excluded one is a fork or a renamed copy."""
import random
import re
import subprocess
from collections import Counter
from pathlib import Path

SOURCE = {
    "py", "rs", "go", "java", "kt", "kts", "scala", "rb", "js", "jsx", "mjs", "cjs", "ts",
    "tsx", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs", "php", "swift", "ex", "exs",
    "hs", "lua", "sh", "bash", "zig", "ml", "dart", "m", "jl", "r",
}
TEST = re.compile(r"(^|/)(tests?|spec|specs|__tests__|testing|examples?|benches|benchmarks?|docs?|"
                  r"vendor|third_party|fixtures?)/|(^|/)test_|_test\.|\.test\.|\.spec\.|Tests?\.")


def git(git_dir, *args):
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True,
                          check=True).stdout


def git_dir(mirrors, repo):
    base = Path(mirrors) / repo.replace("/", "+", 1) / "repo"
    return base / ".git" if (base / ".git").is_dir() else base


def slug(repo):
    return repo.replace("/", "+", 1)


def is_test(path):
    return bool(TEST.search(path))


def roots(gd):
    try:
        return set(git(gd, "rev-list", "--max-parents=0", "HEAD").split())
    except subprocess.CalledProcessError:
        return set()


class Excluded:
    """The repositories no model may train on: `excluded-repos.txt` (one `owner/name` a line),
    and any mirror sharing a root commit with one of them that is present."""

    def __init__(self, path, mirrors=None):
        path = Path(path)
        if not path.is_file():
            raise SystemExit(f"{path} not found: the excluded repositories must be known "
                             "(--excluded names the file)")
        self.path = path
        self.names = {line.strip().lower() for line in path.read_text().splitlines()
                      if line.strip() and not line.startswith("#")}
        self.roots = set()
        if mirrors:
            for d in Path(mirrors).glob("*"):
                name = d.name.replace("+", "/", 1).lower()
                if name in self.names:
                    self.roots |= roots(git_dir(mirrors, d.name.replace("+", "/", 1)))

    def refused(self, repo, gd=None):
        """Why `repo` may not be trained on, or None."""
        if repo.lower() in self.names:
            return f"listed in {self.path.name}"
        shared = roots(gd) & self.roots if gd is not None else set()
        if shared:
            return f"shares root commit {sorted(shared)[0][:10]} with an excluded repository"
        return None


def language(gd, rev="HEAD"):
    """The repository's most common source extension at `rev`."""
    exts = Counter()
    for path in git(gd, "ls-tree", "-r", "--name-only", rev).splitlines():
        ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
        if ext in SOURCE:
            exts[ext] += 1
    return exts.most_common(1)[0][0] if exts else "?"


def head_sources(gd, head, seed=None):
    """(path, text) of `head`'s non-test source files under 300 KB that are UTF-8, in a
    `seed`ed shuffled order when one is given, read lazily."""
    listing = git(gd, "ls-tree", "-r", "-l", head)
    wanted = []
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        _, kind, sha, size = meta.split()
        ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
        # A blob the mirror lacks lists its size as "BAD" (or "-"): skipped.
        if kind == "blob" and ext in SOURCE and size.isdigit() and int(size) < 300_000 \
                and not is_test(path):
            wanted.append((path, sha))
    if seed is not None:
        random.Random(seed).shuffle(wanted)
    cat = subprocess.Popen(["git", f"--git-dir={gd}", "cat-file", "--batch"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        for path, sha in wanted:
            cat.stdin.write(f"{sha}\n".encode())
            cat.stdin.flush()
            header = cat.stdout.readline().split()
            if len(header) < 3 or header[1] != b"blob":
                continue
            data = cat.stdout.read(int(header[2]))
            cat.stdout.read(1)
            try:
                yield path, data.decode("utf-8")
            except UnicodeDecodeError:
                continue
    finally:
        cat.stdin.close()
        cat.wait()
