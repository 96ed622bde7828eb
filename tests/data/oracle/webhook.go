package main

import (
	"encoding/json"
	"os"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/helper"
	"github.com/karmada-io/karmada/pkg/util/validation"
)

// webhookCase is a PropagationPolicy's namespace and spec as the API server hands them to the webhooks (the
// CRD's defaults applied: the cases set every defaulted field themselves).
type webhookCase struct {
	Namespace string                         `json:"namespace"`
	Spec      policyv1alpha1.PropagationSpec `json:"spec"`
}

// fieldError is one reason of a denial: its field, its detail (the words after the value), the whole message.
type fieldError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
	Error  string `json:"error"`
}

// webhookDecisions runs the PropagationPolicy mutating webhook's defaulting (pkg/webhook/propagationpolicy
// mutating.go) and then its validation (validating.go validatePolicy: validation.ValidatePropagationSpec): the
// errors each case is denied for, one string per field error ([] when admitted).
func webhookDecisions() {
	var cases []webhookCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	answers := make([][]fieldError, 0, len(cases))
	for i := range cases {
		c := &cases[i]
		for j := range c.Spec.ResourceSelectors {
			if len(c.Spec.ResourceSelectors[j].Namespace) == 0 {
				c.Spec.ResourceSelectors[j].Namespace = c.Namespace
			}
		}
		helper.SetDefaultSpreadConstraints(c.Spec.Placement.SpreadConstraints)
		if helper.ContainsServiceImport(c.Spec.ResourceSelectors) {
			c.Spec.PropagateDeps = true
		}
		helper.SetReplicaDivisionPreferenceWeighted(&c.Spec.Placement)
		if c.Spec.Failover != nil && c.Spec.Failover.Application != nil {
			helper.SetDefaultGracePeriodSeconds(c.Spec.Failover.Application)
		}
		errs := validation.ValidatePropagationSpec(c.Spec, c.Namespace)
		denied := make([]fieldError, 0, len(errs))
		for _, err := range errs {
			denied = append(denied, fieldError{Field: err.Field, Detail: err.Detail, Error: err.Error()})
		}
		answers = append(answers, denied)
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		panic(err)
	}
}
