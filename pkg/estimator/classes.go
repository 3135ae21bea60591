package estimator

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// demandClasses groups the workloads of one ClusterQueue by demand shape
// (their pod sets' names, counts and per-pod requests) without building
// anything per workload: a workload is hashed from Kueue's TotalRequests
// and compared with the class found, and only the first workload of a
// class is converted. What depends only on the shape — the partition and
// the forecast's flavor options of a pending workload — is computed once
// per class.
type demandClasses struct {
	seed   maphash.Seed
	byHash map[uint64][]*demandClass
	all    []*demandClass
	// hashEntry and matchEntry visit one request of a pod set (Kueue's
	// Requests.ForEach), reading and writing the fields below; made once,
	// so that visiting allocates nothing.
	hashEntry, matchEntry func(corev1.ResourceName, int64)
	count                 int64
	sum                   uint64
	want                  map[string]int64
	match                 bool
}

// demandClass is one demand shape of a ClusterQueue's workloads.
type demandClass struct {
	// class is the shape with, as its rate, how many running and Quotable
	// pending workloads have it (the a-priori model's mix).
	class capacity.Class
	// classified says whether classification and options are computed.
	classified     bool
	classification capacity.Classification
	options        []capacity.Quantities
	// index is the class's position in demandClasses.all.
	index uint32
}

func newDemandClasses() *demandClasses {
	d := &demandClasses{seed: maphash.MakeSeed(), byHash: make(map[uint64][]*demandClass)}
	d.hashEntry = func(name corev1.ResourceName, v int64) {
		d.sum += maphash.Comparable(d.seed, requestEntry{name: name, perPod: perPod(v, d.count)})
	}
	d.matchEntry = func(name corev1.ResourceName, v int64) {
		if got, ok := d.want[string(name)]; !ok || got != perPod(v, d.count) {
			d.match = false
		}
	}
	return d
}

// of returns the class of a workload's demand, created with rate 0.
func (d *demandClasses) of(info *workload.Info) *demandClass {
	h := d.hash(info)
	for _, c := range d.byHash[h] {
		if d.sameDemand(info, c.class.Workload) {
			return c
		}
	}
	c := &demandClass{class: capacity.Class{Workload: workloadDemand(info)}, index: uint32(len(d.all))}
	d.byHash[h] = append(d.byHash[h], c)
	d.all = append(d.all, c)
	return c
}

// classify returns the class's partition against cq and its flavor options,
// computing them on first use.
func (c *demandClass) classify(cq *capacity.ClusterQueue) (capacity.Classification, []capacity.Quantities) {
	if !c.classified {
		c.classification = capacity.Classify(cq, c.class.Workload)
		c.options = demandOptions(cq, c.class.Workload)
		c.classified = true
	}
	return c.classification, c.options
}

// mix is the a-priori model's demand mix: every class some workload counts
// in, ordered by its printed shape (fmt.Sprint of its pod sets, printed
// once per class), the order the model has always summed its classes in.
func (d *demandClasses) mix() []capacity.Class {
	type keyed struct {
		key   string
		class capacity.Class
	}
	var classes []keyed
	for _, c := range d.all {
		if c.class.Rate > 0 {
			classes = append(classes, keyed{key: fmt.Sprint(c.class.Workload.PodSets), class: c.class})
		}
	}
	slices.SortFunc(classes, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
	out := make([]capacity.Class, len(classes))
	for i, k := range classes {
		out[i] = k.class
	}
	return out
}

// hash hashes what workloadDemand keeps of a workload: the requests of a
// pod set are summed over their per-entry hashes, so that their order does
// not matter.
func (d *demandClasses) hash(info *workload.Info) uint64 {
	var h maphash.Hash
	h.SetSeed(d.seed)
	for _, ps := range info.TotalRequests {
		h.WriteString(string(ps.Name))
		d.count, d.sum = int64(ps.Count), 0
		if ps.Requests != nil {
			ps.Requests.ForEach(d.hashEntry)
		}
		maphash.WriteComparable(&h, [2]uint64{uint64(d.count), d.sum})
	}
	return h.Sum64()
}

type requestEntry struct {
	name   corev1.ResourceName
	perPod int64
}

// perPod is the per-pod request of a pod set's total, as workloadDemand
// computes it.
func perPod(total, count int64) int64 {
	if count > 0 {
		return total / count
	}
	return total
}

// sameDemand reports whether workloadDemand(info) would equal w.
func (d *demandClasses) sameDemand(info *workload.Info, w capacity.Workload) bool {
	if len(info.TotalRequests) != len(w.PodSets) {
		return false
	}
	for i, ps := range info.TotalRequests {
		want := w.PodSets[i]
		count := int64(ps.Count)
		if string(ps.Name) != want.Name || count != want.Count {
			return false
		}
		if ps.Requests == nil {
			if len(want.Requests) != 0 {
				return false
			}
			continue
		}
		if ps.Requests.Len() != len(want.Requests) {
			return false
		}
		d.count, d.want, d.match = count, want.Requests, true
		ps.Requests.ForEach(d.matchEntry)
		d.want = nil
		if !d.match {
			return false
		}
	}
	return true
}
