#!/bin/sh
# Assembles a Go program that runs client-go's JSONPath as Karmada's state preservation calls it on
# tests/data/jsonpath/cases.json (k8s.io/client-go util/jsonpath and third_party/forked/golang/template at
# 32ce75a7d):
#
#   tests/data/jsonpath/assemble.sh CLIENT_GO_GIT_DIR OUT_DIR && cd OUT_DIR && go run . < cases.json > out.json
#
# client-go's files (Apache-2.0, and the Go authors' BSD-3-Clause for the forked template) are read from a
# checkout and not kept in this repository; the import of the forked template points at the copy.
set -eu
clientgo=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/jsonpath" "$out/template"
for f in doc.go jsonpath.go node.go parser.go; do
  git -C "$clientgo" show "32ce75a7d:util/jsonpath/$f" |
    sed -e 's#"k8s.io/client-go/third_party/forked/golang/template"#"jsonpathcheck/template"#' > "$out/jsonpath/$f"
done
for f in exec.go funcs.go; do
  git -C "$clientgo" show "32ce75a7d:third_party/forked/golang/template/$f" > "$out/template/$f"
done
cp "$here/main.go" "$here/cases.json" "$out/"
printf 'module jsonpathcheck\n\ngo 1.26\n' > "$out/go.mod"
