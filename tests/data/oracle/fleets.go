// The fleetrules oracle, "fleets": Karmada's scheduler over a whole fleet, with the WorkloadAffinity and
// MultiplePodTemplatesScheduling gates on. Each fleet's bindings are scheduled one after another in the order given
// (the queue's), each result written to its spec.clusters and its status in the scheduler's binding indexer
// (with the affinity group indexes of pkg/scheduler/indexer.go), so that the next binding's WorkloadAffinity and
// WorkloadAntiAffinity plugins see it, as the scheduler's informer cache does. A binding with clusterAffinities is
// scheduled as scheduleResourceBindingWithClusterAffinities does (from the observed term; the first that succeeds;
// all failing: the first error, spec.clusters emptied for a FitError); one without, as scheduleResourceBinding
// does (a FitError empties spec.clusters, any other error keeps them).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/features"
	clusterlister "github.com/karmada-io/karmada/pkg/generated/listers/cluster/v1alpha1"
	"github.com/karmada-io/karmada/pkg/scheduler/cache"
	"github.com/karmada-io/karmada/pkg/scheduler/core"
	"github.com/karmada-io/karmada/pkg/scheduler/framework"
	frameworkplugins "github.com/karmada-io/karmada/pkg/scheduler/framework/plugins"
	"github.com/karmada-io/karmada/pkg/util/indexregistry"
	k8scache "k8s.io/client-go/tools/cache"
)

type fleetBinding struct {
	Namespace string                             `json:"namespace"`
	Name      string                             `json:"name"`
	Spec      workv1alpha2.ResourceBindingSpec   `json:"spec"`
	Status    workv1alpha2.ResourceBindingStatus `json:"status"`
}

type fleetCase struct {
	Clusters []clusterv1alpha1.Cluster `json:"clusters"`
	Bindings []fleetBinding            `json:"bindings"`
}

type fleetAnswer struct {
	Binding  string                       `json:"binding"`
	Clusters []workv1alpha2.TargetCluster `json:"clusters"`
	Term     string                       `json:"term,omitempty"`
	Error    string                       `json:"error,omitempty"`
	// with an error: every filter plugin's reasons against each cluster it rejects, for the attempt the error is
	// of (the scheduler stops at the first plugin that rejects a cluster, in a random order: see main.go)
	Rejected map[string][]string `json:"rejected,omitempty"`
}

// rejections runs every in-tree filter plugin, by name, on every cluster (with its context, as the generic
// scheduler's findClustersThatFit gives it): the reasons of each that rejects it.
func rejections(spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus,
	clusters []clusterv1alpha1.Cluster, schedCache cache.Cache) map[string][]string {
	registry := frameworkplugins.NewInTreeRegistry()
	names := make([]string, 0, len(registry))
	for name := range registry {
		names = append(names, name)
	}
	sort.Strings(names)
	out := map[string][]string{}
	for _, name := range names {
		plugin, err := registry[name]()
		if err != nil {
			panic(err)
		}
		for j := range clusters {
			var result *framework.Result
			if withContext, ok := plugin.(framework.FilterPluginWithContext); ok {
				result = withContext.FilterWithContext(&framework.FilterContext{
					Context:                context.TODO(),
					BindingSpec:            spec,
					BindingStatus:          status,
					Cluster:                &clusters[j],
					ResourceBindingIndexer: schedCache.ResourceBindingIndexer(),
					AssigningBindings:      schedCache.AssigningResourceBindings().GetBindings(),
				})
			} else if filter, ok := plugin.(framework.FilterPlugin); ok {
				result = filter.Filter(context.TODO(), spec, status, &clusters[j])
			} else {
				continue
			}
			if !result.IsSuccess() {
				out[clusters[j].Name] = append(out[clusters[j].Name], result.Reasons()...)
			}
		}
	}
	return out
}

func groupIndexer(anti bool) k8scache.IndexFunc {
	return func(obj any) ([]string, error) {
		rb := obj.(*workv1alpha2.ResourceBinding)
		groups := rb.Spec.WorkloadAffinityGroups
		if groups == nil {
			return []string{}, nil
		}
		group := groups.AffinityGroup
		if anti {
			group = groups.AntiAffinityGroup
		}
		if group == "" {
			return []string{}, nil
		}
		return []string{group}, nil
	}
}

// affinityIndex is pkg/scheduler getAffinityIndex: the observed term's index, else 0.
func affinityIndex(terms []policyv1alpha1.ClusterAffinityTerm, observed string) int {
	for i := range terms {
		if terms[i].AffinityName == observed {
			return i
		}
	}
	return 0
}

func scheduleOne(algorithm core.ScheduleAlgorithm, rb *workv1alpha2.ResourceBinding, clusters []clusterv1alpha1.Cluster,
	schedCache cache.Cache) fleetAnswer {
	key := rb.Namespace + "/" + rb.Name
	option := &core.ScheduleAlgorithmOption{}
	terms := rb.Spec.Placement.ClusterAffinities
	if terms == nil {
		rejected := rejections(&rb.Spec, &rb.Status, clusters, schedCache)
		result, err := algorithm.Schedule(context.TODO(), &rb.Spec, &rb.Status, option)
		var fitErr *framework.FitError
		if err != nil && !errors.As(err, &fitErr) {
			return fleetAnswer{Binding: key, Clusters: rb.Spec.Clusters, Error: err.Error(), Rejected: rejected}
		}
		rb.Spec.Clusters = result.SuggestedClusters
		answer := fleetAnswer{Binding: key, Clusters: result.SuggestedClusters}
		if err != nil {
			answer.Error, answer.Rejected = err.Error(), rejected
		}
		return answer
	}
	var firstErr error
	var firstRejected map[string][]string
	status := rb.Status.DeepCopy()
	for index := affinityIndex(terms, rb.Status.SchedulerObservedAffinityName); index < len(terms); index++ {
		status.SchedulerObservedAffinityName = terms[index].AffinityName
		rejected := rejections(&rb.Spec, status, clusters, schedCache)
		result, err := algorithm.Schedule(context.TODO(), &rb.Spec, status, option)
		if err == nil {
			rb.Spec.Clusters = result.SuggestedClusters
			rb.Status.SchedulerObservedAffinityName = terms[index].AffinityName
			return fleetAnswer{Binding: key, Clusters: result.SuggestedClusters, Term: terms[index].AffinityName}
		}
		if firstErr == nil {
			firstErr, firstRejected = err, rejected
		}
	}
	var fitErr *framework.FitError
	if errors.As(firstErr, &fitErr) {
		rb.Spec.Clusters = nil
	}
	return fleetAnswer{Binding: key, Clusters: rb.Spec.Clusters, Error: firstErr.Error(), Rejected: firstRejected}
}

func fleetDecisions() {
	if err := features.FeatureGate.Set("WorkloadAffinity=true,MultiplePodTemplatesScheduling=true"); err != nil {
		panic(err)
	}
	var cases []fleetCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	answers := make([][]fleetAnswer, 0, len(cases))
	for i := range cases {
		c := &cases[i]
		clusters := k8scache.NewIndexer(k8scache.MetaNamespaceKeyFunc, k8scache.Indexers{})
		for j := range c.Clusters {
			if err := clusters.Add(&c.Clusters[j]); err != nil {
				panic(err)
			}
		}
		bindings := k8scache.NewIndexer(k8scache.MetaNamespaceKeyFunc, k8scache.Indexers{
			indexregistry.ResourceBindingIndexByAffinityGroup:     groupIndexer(false),
			indexregistry.ResourceBindingIndexByAntiAffinityGroup: groupIndexer(true),
		})
		objects := make([]*workv1alpha2.ResourceBinding, len(c.Bindings))
		for j, b := range c.Bindings {
			rb := &workv1alpha2.ResourceBinding{Spec: b.Spec, Status: b.Status}
			rb.Namespace, rb.Name = b.Namespace, b.Name
			objects[j] = rb
			if err := bindings.Add(rb); err != nil {
				panic(err)
			}
		}
		schedCache := cache.NewCache(clusterlister.NewClusterLister(clusters), bindings, 0)
		algorithm, err := core.NewGenericScheduler(schedCache, frameworkplugins.NewInTreeRegistry())
		if err != nil {
			panic(err)
		}
		fleet := make([]fleetAnswer, 0, len(objects))
		for _, rb := range objects {
			answer := scheduleOne(algorithm, rb, c.Clusters, schedCache)
			if err := bindings.Update(rb); err != nil {
				panic(fmt.Errorf("binding %s: %w", answer.Binding, err))
			}
			fleet = append(fleet, answer)
		}
		answers = append(answers, fleet)
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		panic(err)
	}
}
