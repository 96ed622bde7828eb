// Reference selections for tests/test_spread.py: Karmada's own selectGroups on random cases.
//
// This file is this project's; Karmada's pkg/scheduler/core/spreadconstraint/select_groups.go (at f8fdd02,
// Apache-2.0) is not copied here. To regenerate, put that file beside this one with its package line
// changed to `package main`, give k8s.io/klog/v2 a stand-in (a package klog with V(int) returning a type
// whose Infof does nothing, wired in by a go.mod replace directive), then:
//
//	go run . < cases.json > selections.json
package main

import (
	"encoding/json"
	"os"
)

type group struct {
	Name   string `json:"name"`
	Value  int    `json:"value"`
	Weight int64  `json:"weight"`
}

type selection struct {
	Groups []group `json:"groups"`
	Min    int     `json:"min"`
	Max    int     `json:"max"`
	Target int     `json:"target"`
}

func main() {
	var cases []selection
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	out := make([][]string, len(cases))
	for i, c := range cases {
		groups := make([]*GroupInfo, len(c.Groups))
		for j, g := range c.Groups {
			groups[j] = &GroupInfo{name: g.Name, value: g.Value, weight: g.Weight}
		}
		out[i] = []string{}
		for _, g := range selectGroups(groups, c.Min, c.Max, c.Target) {
			out[i] = append(out[i], g.name)
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		panic(err)
	}
}
