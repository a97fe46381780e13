#!/usr/bin/env bash
# Refresh the explorer's charting bundle: plotly.js's official partial bundle "basic" (bar, pie,
# scatter; error bars, hover and date axes are in its core), vendored into the package so the
# explorer is written offline, on a fresh machine and in CI, without Node.
#
#     bash scripts/vendor_plotly_basic.sh [version]     (default: the plotly.js that plotly.py bundles)
#
# Needs npm (the registry is reachable here); npm pack checks the tarball against the registry's
# integrity hash, which SOURCE.json records with the file's own sha256 (tests/unit/test_explorer.py
# checks the file against it). Commit the folder afterwards.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/src/benchlib/compare/vendor/plotly.js-basic-dist-min"
PACKAGE=plotly.js-basic-dist-min
VERSION="${1:-$("$ROOT/.venv/bin/python" -c 'import re, plotly.offline as o; print(re.search(r"plotly\.js v(\S+)", o.get_plotlyjs()[:200]).group(1))')}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$PACKAGE@$VERSION" >/dev/null)
tar -xzf "$work/$PACKAGE-$VERSION.tgz" -C "$work"
mkdir -p "$DEST"
cp "$work/package/LICENSE" "$work/package/package.json" "$work/package/plotly-basic.min.js" "$DEST/"
integrity=$(cd "$work" && npm view --silent "$PACKAGE@$VERSION" dist.integrity)
cat > "$DEST/SOURCE.json" <<JSON
{
  "package": "$PACKAGE",
  "version": "$VERSION",
  "license": "MIT",
  "tarball": "https://registry.npmjs.org/$PACKAGE/-/$PACKAGE-$VERSION.tgz",
  "integrity": "$integrity",
  "file": "plotly-basic.min.js",
  "sha256": "$(sha256sum "$DEST/plotly-basic.min.js" | cut -d' ' -f1)"
}
JSON
echo "vendored $PACKAGE $VERSION into $DEST"
