#!/bin/sh
# Assembles a Go program that runs Karmada's own replica assignment (pkg/scheduler/core assignment.go and
# division_algorithm.go, with the helpers they call) on tests/data/assign/cases.json:
#
#   tests/data/assign/assemble.sh KARMADA_GIT_DIR OUT_DIR && cd OUT_DIR && go run . < cases.json > assignments.json
#
# Karmada's files (Apache-2.0) are read from a checkout at f8fdd02 and not kept in this repository; the
# package qualifiers of the API types and helpers are dropped, and standins.go (this project's) defines
# what they were: the API types' fields the assignment reads, sets, and the errors.
set -eu
karmada=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
show() { git -C "$karmada" show "f8fdd02:$1"; }
# whole files, or the named top-level functions and types of a file; imports dropped, qualifiers removed
strip() {
  sed -e 's/^package .*/package main/' -e '/"github.com\//d' -e '/"k8s.io\//d' \
      -e 's/\(policyv1alpha1\|workv1alpha2\|spreadconstraint\|helper\|framework\|util\|sets\)\.\([A-Z]\)/\2/g' \
      -e 's/types\.UID/string/g' -e 's/metav1\.Time/Time/g'
}
pick() {  # FILE NAME...: the declarations (func NAME / func (r) NAME / type NAME) of FILE
  file=$1; shift
  for name in "$@"; do
    show "$file" | awk -v n="$name" '
      !on && $0 ~ "^(func (\\([^)]*\\) )?" n "\\(|type " n " )" { if ($0 !~ /{$/) { print; print ""; next } on = 1 }
      on { print }
      on && /^}/ { on = 0; print "" }'
  done
}
show pkg/scheduler/core/assignment.go | strip > "$out/assignment.go"
show pkg/scheduler/core/division_algorithm.go | strip > "$out/division.go"
show pkg/util/helper/webstermethod.go | strip > "$out/webster.go"
{
  echo "package main"
  echo 'import "hash/fnv"'
  pick pkg/scheduler/core/util.go calculator getDefaultWeightPreference removeZeroReplicasCluster
  pick pkg/util/binding.go GetSumOfReplicas MergeTargetClusters RescheduleRequired
  pick pkg/util/helper/binding.go ClusterWeightInfo ClusterWeightInfoList GetWeightSum Dispenser NewDispenser \
    Done AllocateByWeight tieBreakerByUID convertPartiesToTargetClusters GetStaticWeightInfoListByTargetClusters \
    SpreadReplicasByTargetClusters
} | strip > "$out/helpers.go"
cp "$here/standins.go" "$here/main.go" "$here/cases.json" "$out/"
printf 'module assign\n\ngo 1.26\n' > "$out/go.mod"
