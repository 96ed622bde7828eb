// The fleetrules oracle, "templates": what Karmada's resource detector and default resource interpreter say of a
// resource template: whether the detector's event filter lets it through (pkg/detector ResourceDetector.EventFilter
// with the controller manager's --skipped-propagating-namespaces, compiled as options.SkippedNamespacesRegexps
// compiles them) and its dependencies (pkg/resourceinterpreter/default/native DefaultInterpreter.GetDependencies,
// where the default interpreter has a hook for its kind).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"

	configv1alpha1 "github.com/karmada-io/karmada/pkg/apis/config/v1alpha1"
	"github.com/karmada-io/karmada/pkg/detector"
	"github.com/karmada-io/karmada/pkg/resourceinterpreter/default/native"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type templateCase struct {
	Object  map[string]any `json:"object"`
	Skipped []string       `json:"skipped"`
}

type templateAnswer struct {
	Propagated   bool                                      `json:"propagated"`
	Dependencies []configv1alpha1.DependentObjectReference `json:"dependencies"`
	Error        string                                    `json:"error,omitempty"`
}

func templateDecisions() {
	var cases []templateCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	interpreter := native.NewDefaultInterpreter()
	answers := make([]templateAnswer, 0, len(cases))
	for _, c := range cases {
		skipped := make([]*regexp.Regexp, len(c.Skipped))
		for i, ns := range c.Skipped {
			skipped[i] = regexp.MustCompile(fmt.Sprintf("^%s$", ns))
		}
		object := &unstructured.Unstructured{Object: c.Object}
		d := &detector.ResourceDetector{SkippedPropagatingNamespaces: skipped}
		answer := templateAnswer{Propagated: d.EventFilter(object)}
		if interpreter.HookEnabled(object.GroupVersionKind(), configv1alpha1.InterpreterOperationInterpretDependency) {
			dependencies, err := interpreter.GetDependencies(object)
			if err != nil {
				answer.Error = err.Error()
			}
			answer.Dependencies = dependencies
		}
		answers = append(answers, answer)
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		panic(err)
	}
}
