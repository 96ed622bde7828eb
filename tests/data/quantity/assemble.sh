#!/bin/sh
# Assembles a Go program that decodes tests/data/quantity/cases.json with Kubernetes' own resource.Quantity
# (k8s.io/apimachinery pkg/api/resource at eed236ce, with gopkg.in/inf.v0 at 8237a9a):
#
#   tests/data/quantity/assemble.sh APIMACHINERY_GIT_DIR INF_GIT_DIR OUT_DIR && cd OUT_DIR && go run . < cases.json > out.json
#
# Their files (Apache-2.0, BSD-3-Clause) are read from checkouts and not kept in this repository; the CBOR
# methods of Quantity are dropped (they need another module), the imports of inf.v0 point at the copy.
set -eu
apimachinery=$1 inf=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/resource" "$out/inf"
for f in amount.go math.go scale_int.go suffix.go; do
  git -C "$apimachinery" show "eed236ce:pkg/api/resource/$f" | sed -e 's#inf "gopkg.in/inf.v0"#inf "quantity/inf"#' \
    > "$out/resource/$f"
done
git -C "$apimachinery" show "eed236ce:pkg/api/resource/quantity.go" |
  sed -e '/cbor "k8s.io/d' -e 's#inf "gopkg.in/inf.v0"#inf "quantity/inf"#' |
  awk '/^func \(q \*?Quantity\) (Marshal|Unmarshal)CBOR\(/ { skip = 1 } !skip { print } skip && /^}/ { skip = 0 }' \
  > "$out/resource/quantity.go"
for f in dec.go rounder.go; do
  git -C "$inf" show "8237a9a:$f" | sed -e 's#^package inf // import "gopkg.in/inf.v0"#package inf#' > "$out/inf/$f"
done
cp "$here/main.go" "$here/cases.json" "$out/"
printf 'module quantity\n\ngo 1.26\n' > "$out/go.mod"
