package main

import (
	"encoding/json"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"github.com/karmada-io/karmada/pkg/detector"
)

// policyCase is one choice of the detector: a resource template and the policies there are.
type policyCase struct {
	Template                   map[string]any                            `json:"template"`
	PropagationPolicies        []*policyv1alpha1.PropagationPolicy        `json:"propagationPolicies"`
	ClusterPropagationPolicies []*policyv1alpha1.ClusterPropagationPolicy `json:"clusterPropagationPolicies"`
}

func policyChoices() {
	var cases []policyCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	answers := make([]string, 0, len(cases))
	for _, c := range cases {
		object := &unstructured.Unstructured{Object: c.Template}
		answers = append(answers, detector.OracleChoosePolicy(c.PropagationPolicies, c.ClusterPropagationPolicies, object))
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		panic(err)
	}
}
