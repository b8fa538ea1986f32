#!/bin/bash
# How much a new checkout of an indexed repository costs: a cold `iret index` of a clone,
# then a git worktree at the same commit, a second clone, and a worktree BACK commits
# earlier; each folder from no .iret, the embedding cache fresh at the start.
#
#   scripts/worktree-bench.sh BIN LABEL REPO_GIT [WORK_DIR] [BACK]
#   scripts/worktree-bench.sh target/release/iret new MIRRORS/serde-rs+serde/repo WORK 20
#
# Prints one line per folder: wall seconds and iret's summary (embedded / cached counts).
# (Session 8's side by side: docs/journal/benchmarks.md, "one embedding cache per machine".)
set -euo pipefail
B=$(realpath "$1"); L=$2; SRC=$3; W=${4:-/tmp/iret-worktree-bench}; BACK=${5:-20}
mkdir -p "$W"
[ -d "$W/main" ] || git clone -q "$SRC" "$W/main"
export IRET_EMBED_CACHE=$W/cache-$L
rm -rf "$IRET_EMBED_CACHE" "$W/main/.iret"
cd "$W/main"; git worktree prune
for d in wt-$L clone-$L branch-$L; do rm -rf "${W:?}/$d"; done
git worktree add -q "$W/wt-$L" HEAD
git worktree add -q "$W/branch-$L" "HEAD~$BACK"
git clone -q "$W/main" "$W/clone-$L"
echo "$(git diff --name-only "HEAD~$BACK" HEAD | wc -l) of $(git ls-files | wc -l) files differ $BACK commits back"
for d in main wt-$L clone-$L branch-$L; do
  rm -rf "${W:?}/$d/.iret"
  t0=$(date +%s.%N); out=$("$B" index "$W/$d" 2>&1 | tail -1); t1=$(date +%s.%N)
  printf '%s %-10s wall %.2fs  %s\n' "$L" "$d" "$(echo "$t1 - $t0" | bc)" "$out"
done
