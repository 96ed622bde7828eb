// The fleetrules oracle: Karmada's own generic scheduler (filter and score plugins, selection, assignment)
// run on recorded cases. stdin: a JSON list of {clusters: [Cluster], spec: ResourceBindingSpec}; stdout: a JSON
// list of {clusters: [TargetCluster]} or {error: "..."}, one per case. With the argument "taints": the taint
// manager's eviction decision instead (taints.go); "policies": the detector's policy choice (policies.go);
// "webhook": the PropagationPolicy webhooks' admission (webhook.go); "fleets": whole fleets scheduled one binding
// after another with the workload affinity plugins (fleets.go); "templates": the detector's event filter and the
// default interpreter's dependencies of resource templates (templates.go).
package main

import (
	"context"
	"encoding/json"
	"os"
	"sort"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	clusterlister "github.com/karmada-io/karmada/pkg/generated/listers/cluster/v1alpha1"
	"github.com/karmada-io/karmada/pkg/scheduler/cache"
	"github.com/karmada-io/karmada/pkg/scheduler/core"
	"github.com/karmada-io/karmada/pkg/scheduler/framework"
	frameworkplugins "github.com/karmada-io/karmada/pkg/scheduler/framework/plugins"
	k8scache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

type testCase struct {
	Clusters []clusterv1alpha1.Cluster         `json:"clusters"`
	Spec     workv1alpha2.ResourceBindingSpec   `json:"spec"`
	Status   workv1alpha2.ResourceBindingStatus `json:"status"`
}

type answer struct {
	Clusters []workv1alpha2.TargetCluster `json:"clusters"`
	Error    string                       `json:"error,omitempty"`
	// every filter plugin's reasons against each cluster it rejects (the scheduler stops at the first plugin
	// that rejects a cluster, in the order Go's map iteration gives the registry: random, so its FitError names
	// one of these per cluster)
	Rejected map[string][]string `json:"rejected,omitempty"`
}

// rejections runs every in-tree filter plugin, by name, on every cluster: the reasons of each that rejects it.
func rejections(c *testCase) map[string][]string {
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
		filter, ok := plugin.(framework.FilterPlugin)
		if !ok {
			continue
		}
		for j := range c.Clusters {
			result := filter.Filter(context.TODO(), &c.Spec, &c.Status, &c.Clusters[j])
			if !result.IsSuccess() {
				out[c.Clusters[j].Name] = append(out[c.Clusters[j].Name], result.Reasons()...)
			}
		}
	}
	return out
}

func main() {
	klog.SetOutput(os.Stderr)
	if len(os.Args) > 1 && os.Args[1] == "taints" {
		taintDecisions()
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "policies" {
		policyChoices()
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "webhook" {
		webhookDecisions()
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "fleets" {
		fleetDecisions()
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "templates" {
		templateDecisions()
		return
	}
	var cases []testCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	answers := make([]answer, 0, len(cases))
	for i := range cases {
		c := &cases[i]
		indexer := k8scache.NewIndexer(k8scache.MetaNamespaceKeyFunc, k8scache.Indexers{})
		for j := range c.Clusters {
			if err := indexer.Add(&c.Clusters[j]); err != nil {
				panic(err)
			}
		}
		bindings := k8scache.NewIndexer(k8scache.MetaNamespaceKeyFunc, k8scache.Indexers{})
		schedCache := cache.NewCache(clusterlister.NewClusterLister(indexer), bindings, 0)
		algorithm, err := core.NewGenericScheduler(schedCache, frameworkplugins.NewInTreeRegistry())
		if err != nil {
			panic(err)
		}
		rejected := rejections(c)
		result, err := algorithm.Schedule(context.TODO(), &c.Spec, &c.Status, &core.ScheduleAlgorithmOption{})
		if err != nil {
			answers = append(answers, answer{Error: err.Error(), Rejected: rejected})
			continue
		}
		answers = append(answers, answer{Clusters: result.SuggestedClusters, Rejected: rejected})
	}
	out := json.NewEncoder(os.Stdout)
	if err := out.Encode(answers); err != nil {
		panic(err)
	}
}
