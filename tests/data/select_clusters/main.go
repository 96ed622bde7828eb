// Reference selections for tests/test_spread.py: Karmada's own selectBestClustersByRegion and
// selectBestClustersByCluster on random regions and clusters.
//
// This file is this project's; Karmada's pkg/scheduler/core/spreadconstraint files (at f8fdd02,
// Apache-2.0) are not copied here. To regenerate, put select_groups.go, select_clusters_by_region.go,
// select_clusters_by_cluster.go and util.go beside this one with `package main`, their policy/v1alpha1
// import pointed at a stand-in package holding SpreadFieldValue (cluster, region) and SpreadConstraint
// (SpreadByField, MaxGroups, MinGroups), a do-nothing stand-in for klog, then:
//
//	go run . < cases.json > selections.json
package main

import (
	"encoding/json"
	"os"

	policyv1alpha1 "selectclusters/policy"
)

// The fields of group_clusters.go's types that selection reads.
type ClusterDetailInfo struct {
	Name              string
	Score             int64
	OverflowOrder     int32
	AvailableReplicas int64
}

type RegionInfo struct {
	Name     string
	Score    int64
	Clusters []ClusterDetailInfo
}

type GroupClustersInfo struct {
	Regions  map[string]RegionInfo
	Clusters []ClusterDetailInfo
}

type cluster struct {
	Name      string `json:"name"`
	Score     int64  `json:"score"`
	Available int64  `json:"available"`
}

type region struct {
	Name     string    `json:"name"`
	Score    int64     `json:"score"`
	Clusters []cluster `json:"clusters"`
}

type limits struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

type selection struct {
	Regions  []region  `json:"regions"`  // by region: each region's clusters in candidate order
	Clusters []cluster `json:"clusters"` // by cluster: the candidates in order
	Region   *limits   `json:"region"`
	Cluster  limits    `json:"cluster"`
	Replicas int32     `json:"replicas"` // -1: resources ignored (InvalidReplicas)
}

type answer struct {
	Clusters []string `json:"clusters"`
	Error    string   `json:"error"`
}

func details(clusters []cluster) []ClusterDetailInfo {
	out := make([]ClusterDetailInfo, len(clusters))
	for i, c := range clusters {
		out[i] = ClusterDetailInfo{Name: c.Name, Score: c.Score, AvailableReplicas: c.Available}
	}
	return out
}

func main() {
	var cases []selection
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	out := make([]answer, len(cases))
	for i, c := range cases {
		clusterLimits := policyv1alpha1.SpreadConstraint{
			SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: c.Cluster.Min, MaxGroups: c.Cluster.Max,
		}
		var chosen []ClusterDetailInfo
		var err error
		if c.Region != nil {
			info := &GroupClustersInfo{Regions: map[string]RegionInfo{}}
			for _, r := range c.Regions {
				info.Regions[r.Name] = RegionInfo{Name: r.Name, Score: r.Score, Clusters: details(r.Clusters)}
			}
			constraints := map[policyv1alpha1.SpreadFieldValue]policyv1alpha1.SpreadConstraint{
				policyv1alpha1.SpreadByFieldRegion: {
					SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: c.Region.Min, MaxGroups: c.Region.Max,
				},
				policyv1alpha1.SpreadByFieldCluster: clusterLimits,
			}
			chosen, err = selectBestClustersByRegion(constraints, info)
		} else {
			chosen, err = selectBestClustersByCluster(clusterLimits, &GroupClustersInfo{Clusters: details(c.Clusters)}, c.Replicas)
		}
		out[i].Clusters = []string{}
		if err != nil {
			out[i].Error = err.Error()
		}
		for _, cl := range chosen {
			out[i].Clusters = append(out[i].Clusters, cl.Name)
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		panic(err)
	}
}
