#!/usr/bin/env bash
# The scale run of docs/journal/benchmarks.md: a cold index of TREE into a fresh INDEX folder with a
# search 3 s into it, then a one-file edit, a no-change refresh, a warm whole-process
# search, and the size on disk. Prints each figure; IRET (default target/release/iret).
#   scripts/scale-bench.sh ALL20 INDEX
# (ALL20: the 20 extracted dev corpora copied side by side into one folder.)
# The edit appends a comment line to one file of TREE (the first source file found).
set -euo pipefail
tree=${1:?usage: scale-bench.sh TREE INDEX_DIR}
index=${2:?usage: scale-bench.sh TREE INDEX_DIR}
iret=${IRET:-target/release/iret}
query=${QUERY:-how are struct fields serialized}
rm -rf "$index"
( /usr/bin/time -f "cold index: %e s, peak RSS %M KB" env IRET_PROFILE=1 "$iret" index "$tree" --index-dir "$index" -q ) 2>&1 | sed 's/^/  /' &
sleep 3
/usr/bin/time -f "search 3 s into the cold index: %e s" "$iret" search "$query" -C "$tree" --index-dir "$index" --cycles 1 --no-refresh -k 3 >/dev/null
wait
edited=$(find "$tree" -type f \( -name '*.rs' -o -name '*.ts' -o -name '*.py' -o -name '*.go' \) | sort | head -n 1)
echo "// scale-bench edit" >> "$edited"
/usr/bin/time -f "one-file edit: %e s, peak RSS %M KB" "$iret" index "$tree" --index-dir "$index" -q
/usr/bin/time -f "no-change refresh: %e s, peak RSS %M KB" "$iret" index "$tree" --index-dir "$index" -q
/usr/bin/time -f "warm search (whole process): %e s, peak RSS %M KB" "$iret" search "$query" -C "$tree" --index-dir "$index" >/dev/null
echo "on disk (live generation, embedding cache):"
du -sb "$index/$(cat "$index/CURRENT")" "$index/embeddings.f16"
