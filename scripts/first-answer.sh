#!/bin/bash
# Time to the first answer on a cold repository: starts a cold `iret index` (an empty
# embedding cache of its own), sends a search DELAY seconds later, prints which tier
# answered and the top files, then stops the build.
#   scripts/first-answer.sh BIN TREE "query" [DELAY]
set -eu
BIN=$1; TREE=$2; QUERY=$3; DELAY=${4:-1}
WORK=$(mktemp -d)
trap 'kill $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
cp -r "$TREE" "$WORK/tree"; rm -rf "$WORK/tree/.iret"
export IRET_EMBED_CACHE="$WORK/cache"
START=$(date +%s.%N)
"$BIN" index -q "$WORK/tree" & PID=$!
sleep "$DELAY"
ASKED=$(date +%s.%N)
"$BIN" search "$QUERY" -C "$WORK/tree" --no-refresh --json 2>/dev/null > "$WORK/answer.json"
DONE=$(date +%s.%N)
python3 - "$WORK/answer.json" "$START" "$ASKED" "$DONE" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s, a, e = map(float, sys.argv[2:5])
print(f"asked {a - s:.2f} s into the build, answered {e - s:.2f} s in: tier {d['index']['tier']}, "
      f"freshness {d['index']['freshness']}")
for f in (d["files"] or d["below_threshold"])[:5]:
    print("  ", f["path"] if isinstance(f, dict) else f)
PY
