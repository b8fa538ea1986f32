#!/usr/bin/env bash
# The `iret` wheel, built and tried as a user gets it: maturin builds it (pyproject.toml),
# the binary and the wheel must each be at most 100 MB (PyPI's default limit), a fresh
# virtual environment installs it, and the installed `iret` runs the worked examples and
# the official MCP SDK's tests (tests/worked_examples.rs, tests/mcp_sdk.rs, through
# IRET_TEST_BIN); then `uvx --from <wheel> iret mcp` serves the SDK's smoke test, offline.
#
# Usage: scripts/wheel-check.sh [WORK_DIR]    (default: a new temporary folder)
# Needs python3 with venv and pip, and the registries (maturin and uv come from PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."
WORK="${1:-$(mktemp -d)}"
mkdir -p "$WORK"
LIMIT=100000000

echo "wheel-check: building in $WORK"
rm -rf "$WORK/build" "$WORK/venv" "$WORK/dist"
python3 -m venv "$WORK/build"
"$WORK/build/bin/pip" install --quiet "maturin==1.16.0" "uv==0.13.9"
"$WORK/build/bin/maturin" build --release --out "$WORK/dist"
WHEEL="$(ls "$WORK"/dist/iret-*.whl)"

binary_size=$(stat -c %s target/release/iret)
wheel_size=$(stat -c %s "$WHEEL")
echo "wheel-check: binary $binary_size bytes, wheel $wheel_size bytes ($(basename "$WHEEL"))"
for pair in "binary:$binary_size" "wheel:$wheel_size"; do
  if [ "${pair#*:}" -gt "$LIMIT" ]; then
    echo "wheel-check: the ${pair%%:*} is over 100 MB (${pair#*:} bytes)" >&2
    exit 1
  fi
done

python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install --quiet "$WHEEL"
"$WORK/venv/bin/iret" --version
IRET_TEST_BIN="$WORK/venv/bin/iret" cargo test --test worked_examples --test mcp_sdk

# `uvx --from <wheel> iret mcp`, the line agents' configurations hold, spoken to by the SDK.
cat > "$WORK/iret-uvx" <<WRAP
#!/bin/sh
exec "$WORK/build/bin/uvx" --offline --from "$WHEEL" iret "\$@"
WRAP
chmod +x "$WORK/iret-uvx"
UV_CACHE_DIR="$WORK/uv-cache" IRET_TEST_BIN="$WORK/iret-uvx" \
  cargo test --test mcp_sdk the_official_sdk_lists_the_tools_and_retrieves_both_worked_examples
echo "wheel-check: ok"
