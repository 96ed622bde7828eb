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

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	clusterlister "github.com/karmada-io/karmada/pkg/generated/listers/cluster/v1alpha1"
	"github.com/karmada-io/karmada/pkg/scheduler/cache"
	"github.com/karmada-io/karmada/pkg/scheduler/core"
	frameworkplugins "github.com/karmada-io/karmada/pkg/scheduler/framework/plugins"
	k8scache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

type testCase struct {
	Clusters []clusterv1alpha1.Cluster          `json:"clusters"`
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

func main() {
	klog.SetOutput(os.Stderr)
	modes := map[string]func(){
		"taints":    taintDecisions,
		"policies":  policyChoices,
		"webhook":   webhookDecisions,
		"fleets":    fleetDecisions,
		"templates": templateDecisions,
	}
	if len(os.Args) > 1 {
		modes[os.Args[1]]()
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
		rejected := rejections(&c.Spec, &c.Status, c.Clusters, schedCache)
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
