// What the assignment reads of Karmada's API types and helper packages, for assemble.sh (this project's
// code, not Karmada's): the fields and functions by the names Karmada's files use once their package
// qualifiers are dropped.
package main

import "time"

type ReplicaSchedulingType string

type ReplicaDivisionPreference string

type DynamicWeightFactor string

const (
	ReplicaSchedulingTypeDuplicated     ReplicaSchedulingType     = "Duplicated"
	ReplicaSchedulingTypeDivided        ReplicaSchedulingType     = "Divided"
	ReplicaDivisionPreferenceAggregated ReplicaDivisionPreference = "Aggregated"
	ReplicaDivisionPreferenceWeighted   ReplicaDivisionPreference = "Weighted"
	DynamicWeightByAvailableReplicas    DynamicWeightFactor       = "AvailableReplicas"
)

type ClusterAffinity struct{ ClusterNames []string }

type StaticClusterWeight struct {
	TargetCluster ClusterAffinity
	Weight        int64
}

type ClusterPreferences struct {
	StaticWeightList []StaticClusterWeight
	DynamicWeight    DynamicWeightFactor
}

type ReplicaSchedulingStrategy struct {
	ReplicaSchedulingType     ReplicaSchedulingType
	ReplicaDivisionPreference ReplicaDivisionPreference
	WeightPreference          *ClusterPreferences
}

type Placement struct{ ReplicaScheduling *ReplicaSchedulingStrategy }

// ReplicaSchedulingType as pkg/apis/policy/v1alpha1/propagation_helper.go has it.
func (p *Placement) ReplicaSchedulingType() ReplicaSchedulingType {
	if p.ReplicaScheduling == nil {
		return ReplicaSchedulingTypeDuplicated
	}
	return p.ReplicaScheduling.ReplicaSchedulingType
}

type TargetCluster struct {
	Name     string
	Replicas int32
}

type ObjectReference struct{ UID string }

type Time struct{ time.Time }

type ResourceBindingSpec struct {
	Placement             *Placement
	Clusters              []TargetCluster
	Replicas              int32
	Resource              ObjectReference
	RescheduleTriggeredAt *Time
}

type ResourceBindingStatus struct{ LastScheduledTime *Time }

type Cluster struct{ Name string }

type ClusterDetailInfo struct {
	Name                string
	Score               int64
	OverflowOrder       int32
	AvailableReplicas   int64
	Cluster             *Cluster
	AllocatableReplicas int32
}

// ClusterMatches for a target given by cluster names only (the default weight preference's).
func ClusterMatches(cluster *Cluster, affinity ClusterAffinity) bool {
	for _, name := range affinity.ClusterNames {
		if name == cluster.Name {
			return true
		}
	}
	return false
}

func MaxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

type UnschedulableError struct{ Message string }

func (e *UnschedulableError) Error() string { return e.Message }

type Set[T comparable] map[T]struct{}

func (s Set[T]) Insert(items ...T) Set[T] {
	for _, item := range items {
		s[item] = struct{}{}
	}
	return s
}

func (s Set[T]) Has(item T) bool {
	_, ok := s[item]
	return ok
}

type String = Set[string]

func NewString(items ...string) String { return String{}.Insert(items...) }
