// Reference assignments for tests/test_replicas.py: Karmada's own replica assignment on random cases.
// See assemble.sh: this file and standins.go are this project's, Karmada's files are not kept here.
package main

import (
	"encoding/json"
	"os"
	"time"
)

type target struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas"`
}

type candidate struct {
	Name        string `json:"name"`
	Available   int64  `json:"available"`
	Allocatable int32  `json:"allocatable"`
}

type assignment struct {
	Strategy   string      `json:"strategy"` // Aggregated, DynamicWeight or StaticWeight
	Candidates []candidate `json:"candidates"`
	Replicas   int32       `json:"replicas"`
	Previous   []target    `json:"previous"`
	UID        string      `json:"uid"`
	Fresh      bool        `json:"fresh"`
}

type answer struct {
	Replicas map[string]int32 `json:"replicas"`
	Error    string           `json:"error"`
}

func main() {
	var cases []assignment
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	out := make([]answer, len(cases))
	for i, c := range cases {
		strategy := &ReplicaSchedulingStrategy{ReplicaSchedulingType: ReplicaSchedulingTypeDivided}
		switch c.Strategy {
		case "Aggregated":
			strategy.ReplicaDivisionPreference = ReplicaDivisionPreferenceAggregated
		case "DynamicWeight":
			strategy.ReplicaDivisionPreference = ReplicaDivisionPreferenceWeighted
			strategy.WeightPreference = &ClusterPreferences{DynamicWeight: DynamicWeightByAvailableReplicas}
		default:
			strategy.ReplicaDivisionPreference = ReplicaDivisionPreferenceWeighted
		}
		spec := &ResourceBindingSpec{Placement: &Placement{ReplicaScheduling: strategy}, Replicas: c.Replicas}
		spec.Resource.UID = c.UID
		for _, p := range c.Previous {
			spec.Clusters = append(spec.Clusters, TargetCluster{Name: p.Name, Replicas: p.Replicas})
		}
		status := &ResourceBindingStatus{}
		if c.Fresh {
			last := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			spec.RescheduleTriggeredAt = &Time{last.Add(time.Hour)}
			status.LastScheduledTime = &Time{last}
		}
		candidates := make([]ClusterDetailInfo, len(c.Candidates))
		for j, cc := range c.Candidates {
			candidates[j] = ClusterDetailInfo{
				Name: cc.Name, Cluster: &Cluster{Name: cc.Name}, AvailableReplicas: cc.Available, AllocatableReplicas: cc.Allocatable,
			}
		}
		state := newAssignState(candidates, spec, status)
		result, err := assignFuncMap[state.strategyType](state)
		out[i].Replicas = map[string]int32{}
		if err != nil {
			out[i].Error = err.Error()
			continue
		}
		for _, t := range removeZeroReplicasCluster(result) {
			out[i].Replicas[t.Name] = t.Replicas
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		panic(err)
	}
}
