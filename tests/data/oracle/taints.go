package main

import (
	"encoding/json"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/karmada-io/karmada/pkg/util/helper"
)

// taintCase is one decision of the taint manager: a cluster's taints, a placement's tolerations, the time.
type taintCase struct {
	Taints      []corev1.Taint      `json:"taints"`
	Tolerations []corev1.Toleration `json:"tolerations"`
	Now         time.Time           `json:"now"`
}

// taintAnswer is what NoExecuteTaintManager.needEvictionWithCurrentTime decides (the taint manager on): evict
// now, evict after Seconds, or never.
type taintAnswer struct {
	Decision string  `json:"decision"` // now | after | never
	Seconds  float64 `json:"seconds,omitempty"`
}

func taintDecisions() {
	var cases []taintCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	answers := make([]taintAnswer, 0, len(cases))
	for _, c := range cases {
		taints := helper.GetNoExecuteTaints(c.Taints)
		if len(taints) == 0 {
			answers = append(answers, taintAnswer{Decision: "never"})
			continue
		}
		allTolerated, used := helper.GetMatchingTolerations(taints, c.Tolerations)
		if !allTolerated {
			answers = append(answers, taintAnswer{Decision: "now"})
			continue
		}
		wait := helper.GetMinTolerationTimeWithCurrentTime(taints, used, c.Now)
		switch {
		case wait == 0:
			answers = append(answers, taintAnswer{Decision: "now"})
		case wait < 0:
			answers = append(answers, taintAnswer{Decision: "never"})
		default:
			answers = append(answers, taintAnswer{Decision: "after", Seconds: wait.Seconds()})
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		panic(err)
	}
}
