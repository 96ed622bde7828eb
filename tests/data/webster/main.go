// Reference allocations for tests/test_replicas.py: Karmada's own AllocateWebsterSeats on random cases.
//
// This file is this project's; Karmada's pkg/util/helper/webstermethod.go (at f8fdd02, Apache-2.0) is not
// copied here. To regenerate, put that file beside this one with its package line changed to `package
// main`, then:
//
//	go run . < cases.json > allocations.json
package main

import (
	"encoding/json"
	"hash/fnv"
	"os"
)

type webster struct {
	Seats   int32            `json:"seats"`
	Votes   map[string]int64 `json:"votes"`
	Initial map[string]int32 `json:"initial"`
	UID     string           `json:"uid"`
}

// tieBreakerByUID as pkg/util/helper/binding.go has it (types.UID is a string).
func tieBreakerByUID(uid string) func(a, b Party) bool {
	descending := func(a, b Party) bool {
		if a.Seats != b.Seats {
			return a.Seats < b.Seats
		}
		return a.Name > b.Name
	}
	ascending := func(a, b Party) bool {
		if a.Seats != b.Seats {
			return a.Seats < b.Seats
		}
		return a.Name < b.Name
	}
	if len(uid) == 0 {
		return ascending
	}
	h := fnv.New32a()
	h.Write([]byte(uid))
	if h.Sum32()&1 == 1 {
		return descending
	}
	return ascending
}

func main() {
	var cases []webster
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	out := make([]map[string]int32, len(cases))
	for i, c := range cases {
		out[i] = map[string]int32{}
		for _, p := range AllocateWebsterSeats(c.Seats, c.Votes, c.Initial, tieBreakerByUID(c.UID)) {
			out[i][p.Name] = p.Seats
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		panic(err)
	}
}
