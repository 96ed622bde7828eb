// Reads a JSON list of quantities as a Kubernetes object holds them (each a JSON string or number) from
// stdin and prints, for each, what apimachinery's resource.Quantity makes of it when an object is decoded
// (UnmarshalJSON): an error, or Value(), MilliValue() and the format. This project's file; resource/
// and inf/ are assembled by assemble.sh.
package main

import (
	"encoding/json"
	"os"

	"quantity/resource"
)

type result struct {
	Error  string `json:"error,omitempty"`
	Value  *int64 `json:"value,omitempty"`
	Milli  *int64 `json:"milli,omitempty"`
	Format string `json:"format,omitempty"`
}

func main() {
	var cases []json.RawMessage
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	out := make([]result, 0, len(cases))
	for _, raw := range cases {
		var q resource.Quantity
		if err := q.UnmarshalJSON(raw); err != nil {
			out = append(out, result{Error: err.Error()})
			continue
		}
		value, milli := q.Value(), q.MilliValue()
		out = append(out, result{Value: &value, Milli: &milli, Format: string(q.Format)})
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", " ")
	if err := encoder.Encode(out); err != nil {
		panic(err)
	}
}
