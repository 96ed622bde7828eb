// Reference values for tests/test_gojson.py: reads floats and strings as JSON on standard input and
// prints how Go shows each: fmt.Sprint, strconv.FormatFloat(f, 'g', -1, 32) and json.Marshal.
//
//	go run main.go < in.json > out.json
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

type in struct {
	Floats  []float64 `json:"floats"`
	Strings []string  `json:"strings"`
}

func main() {
	var data in
	if err := json.NewDecoder(os.Stdin).Decode(&data); err != nil {
		panic(err)
	}
	out := map[string][]string{}
	for _, f := range data.Floats {
		m, _ := json.Marshal(f)
		out["fprint"] = append(out["fprint"], fmt.Sprint(f))
		out["g32"] = append(out["g32"], strconv.FormatFloat(f, 'g', -1, 32))
		out["json"] = append(out["json"], string(m))
	}
	for _, s := range data.Strings {
		m, _ := json.Marshal(s)
		out["jstr"] = append(out["jstr"], string(m))
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
