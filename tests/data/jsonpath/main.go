// Reads {"statuses": [...], "cases": [[template, index of a status], ...]} from stdin and prints, for each
// case, what Karmada's state preservation makes of it (pkg/util/helper/failover.go parseJSONValue, whose calls this repeats): the
// text client-go's JSONPath prints, or the error. This project's file; jsonpath/ and template/ are
// client-go's, assembled by assemble.sh.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"jsonpathcheck/jsonpath"
)

type input struct {
	Statuses []json.RawMessage `json:"statuses"`
	Cases    [][2]any          `json:"cases"`
}

type result struct {
	Out   *string `json:"out,omitempty"`
	Error string  `json:"error,omitempty"`
}

func parseJSONValue(rawStatus []byte, jsonPath string) (string, error) {
	j := jsonpath.New(jsonPath)
	j.AllowMissingKeys(false)
	if err := j.Parse(jsonPath); err != nil {
		return "", err
	}
	var unmarshalled any
	if err := json.Unmarshal(rawStatus, &unmarshalled); err != nil {
		return "", fmt.Errorf("failed to unmarshal rawStatus: %w", err)
	}
	buf := new(bytes.Buffer)
	if err := j.Execute(buf, unmarshalled); err != nil {
		return "", fmt.Errorf("failed to execute jsonpath %q: %w", jsonPath, err)
	}
	return buf.String(), nil
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	out := make([]result, 0, len(in.Cases))
	for _, c := range in.Cases {
		template, status := c[0].(string), in.Statuses[int(c[1].(float64))]
		text, err := parseJSONValue(status, template)
		if err != nil {
			out = append(out, result{Error: err.Error()})
			continue
		}
		out = append(out, result{Out: &text})
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", " ")
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(out); err != nil {
		panic(err)
	}
}
