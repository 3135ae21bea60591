// Package positions indexes a caller's list of workloads by name: [Table]
// finds the position of a workload's namespace and name in the list (an
// open-addressing hash table of positions that keeps no name), and
// [Tracked] holds a value per workload by name, in shards of a dense slice
// and a Table each. The estimator keeps its pending workloads in a Tracked
// and indexes each ClusterQueue's published estimates with a Table.
//
// It imports nothing of Kueue or Kubernetes.
package positions
