#!/usr/bin/env bash
# Copies the web client's third-party libraries from their npm packages into
# web/dist/vendor/. Run it after changing a version below; CI may re-run it and
# `git diff --exit-code web/dist/vendor` to check the committed files are exactly
# what the packages ship (minus the sourceMappingURL comment, whose .map files
# are not vendored).
set -euo pipefail
cd "$(dirname "$0")"
out=dist/vendor

packages=(
	"uplot@1.6.32"
	"@dagrejs/dagre@3.1.3"
	"marked@18.2.1"
	"dompurify@3.4.18"
	"cytoscape@3.35.0"
	"cytoscape-edgehandles@4.0.1"
	"lodash@4.17.21"
	"@cfworker/json-schema@4.1.6"
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "${packages[@]}" >/dev/null)
unpack() { # tarball-glob dir
	mkdir -p "$tmp/$2"
	tar -xzf "$tmp"/$1 -C "$tmp/$2"
}
unpack 'uplot-*.tgz' uplot
unpack 'dagrejs-dagre-*.tgz' dagre
unpack 'marked-*.tgz' marked
unpack 'dompurify-*.tgz' dompurify
unpack 'cytoscape-3*.tgz' cytoscape
unpack 'cytoscape-edgehandles-*.tgz' edgehandles
unpack 'lodash-*.tgz' lodash
unpack 'cfworker-json-schema-*.tgz' json-schema

# copy SRC DEST: the file without its trailing sourceMappingURL comment.
copy() {
	mkdir -p "$(dirname "$2")"
	grep -v '^//# sourceMappingURL=' "$1" | sed 's|//# sourceMappingURL=.*$||' >"$2"
}

rm -rf "$out/uplot" "$out/dagre" "$out/marked" "$out/dompurify" "$out/cytoscape" "$out/edgehandles" "$out/lodash" "$out/json-schema"
copy "$tmp/uplot/package/dist/uPlot.esm.js" "$out/uplot/uPlot.esm.js"
copy "$tmp/uplot/package/dist/uPlot.min.css" "$out/uplot/uPlot.min.css"
cp "$tmp/uplot/package/LICENSE" "$out/uplot/LICENSE"
copy "$tmp/dagre/package/dist/dagre.esm.js" "$out/dagre/dagre.esm.js"
cp "$tmp/dagre/package/LICENSE" "$out/dagre/LICENSE"
cp "$tmp/dagre/package/dist/dagre.esm.js.LEGAL.txt" "$out/dagre/dagre.esm.js.LEGAL.txt"
copy "$tmp/marked/package/lib/marked.esm.js" "$out/marked/marked.esm.js"
cp "$tmp/marked/package/LICENSE" "$out/marked/LICENSE"
copy "$tmp/dompurify/package/dist/purify.es.mjs" "$out/dompurify/purify.es.mjs"
cp "$tmp/dompurify/package/LICENSE" "$out/dompurify/LICENSE"
copy "$tmp/cytoscape/package/dist/cytoscape.esm.min.mjs" "$out/cytoscape/cytoscape.esm.min.mjs"
cp "$tmp/cytoscape/package/LICENSE" "$out/cytoscape/LICENSE"
# cytoscape-edgehandles ships a UMD bundle only; loaded as a classic script it reads
# lodash's memoize and throttle from the global _ (lodash's own UMD build).
copy "$tmp/edgehandles/package/cytoscape-edgehandles.js" "$out/edgehandles/cytoscape-edgehandles.js"
cp "$tmp/edgehandles/package/LICENSE" "$out/edgehandles/LICENSE"
copy "$tmp/lodash/package/lodash.min.js" "$out/lodash/lodash.min.js"
cp "$tmp/lodash/package/LICENSE" "$out/lodash/LICENSE"
# @cfworker/json-schema: the ES modules as shipped (no eval, so the page's CSP holds); the
# package names its MIT licence in package.json and ships no LICENSE file.
for f in deep-compare-strict dereference format index pointer types ucs2-length validate validator; do
	copy "$tmp/json-schema/package/dist/esm/$f.js" "$out/json-schema/$f.js"
done
cp "$tmp/json-schema/package/package.json" "$out/json-schema/package.json"
echo "vendored: ${packages[*]}"
