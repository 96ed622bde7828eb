// Reference orders for tests/test_gosort.py: reads cases (lists of integers) as JSON on standard input,
// sorts each with sort.Sort by value descending (as Karmada's TargetClustersList.Less), and prints, for
// each case, the original positions in the order sort.Sort left them.
//
//	go run main.go < cases.json > orders.json
package main

import (
	"encoding/json"
	"os"
	"sort"
)

type item struct{ value, at int }

type byValueDescending []item

func (a byValueDescending) Len() int           { return len(a) }
func (a byValueDescending) Swap(i, j int)      { a[i], a[j] = a[j], a[i] }
func (a byValueDescending) Less(i, j int) bool { return a[i].value > a[j].value }

func main() {
	var cases [][]int
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	orders := make([][]int, len(cases))
	for c, values := range cases {
		items := make(byValueDescending, len(values))
		for i, v := range values {
			items[i] = item{v, i}
		}
		sort.Sort(items)
		orders[c] = make([]int, len(items))
		for i, it := range items {
			orders[c][i] = it.at
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(orders); err != nil {
		panic(err)
	}
}
