#!/bin/bash
# usage: scripts/chunk-diff.sh OLD_REV NEW_REV DIR...
# Chunks every file under DIR... with iret-chunk at two revisions (examples/chunk_dump.rs
# from the working tree, copied into each checkout) and prints, per file extension, how
# many dump lines differ. Nothing printed under "differing lines" = byte-identical chunks.
set -euo pipefail
old=$1; new=$2; shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'git -C "$here" worktree remove --force "$work/old" 2>/dev/null; git -C "$here" worktree remove --force "$work/new" 2>/dev/null; rm -rf "$work"' EXIT
for side in old new; do
  rev=${!side}
  git -C "$here" worktree add -q --detach "$work/$side" "$rev"
  cp "$here/crates/iret-chunk/examples/chunk_dump.rs" "$work/$side/crates/iret-chunk/examples/"
  grep -q '^\[dev-dependencies\]' "$work/$side/crates/iret-chunk/Cargo.toml" ||
    printf '\n[dev-dependencies]\nserde_json.workspace = true\n' >> "$work/$side/crates/iret-chunk/Cargo.toml"
  (cd "$work/$side" && cargo run -q --release -p iret-chunk --example chunk_dump -- "$@") > "$work/$side.tsv"
done
wc -l "$work/old.tsv" "$work/new.tsv"
echo "differing lines by extension:"
diff "$work/old.tsv" "$work/new.tsv" | grep '^[<>]' | cut -f1 | sed 's/^[<>] //; s/.*\.//' | sort | uniq -c | sort -rn || true
