package estimator

import (
	"hash/maphash"

	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// demandClasses groups the workloads of one ClusterQueue by demand shape
// (their pod sets' names, counts and per-pod requests) without building
// anything per workload: a workload is hashed from Kueue's TotalRequests
// and compared with the classes found, and only the first workload of a
// class is converted. The engine then computes what depends only on the
// shape — the partition and the roll's flavor options — once per class.
type demandClasses struct {
	seed   maphash.Seed
	byHash map[uint64][]int
	// shapes are the classes' demands, in the order they were found; a
	// class is its index here.
	shapes []capacity.Workload
	// hashEntry and matchEntry visit one request of a pod set (Kueue's
	// Requests.ForEach), reading and writing the fields below; made once,
	// so that visiting allocates nothing.
	hashEntry, matchEntry func(corev1.ResourceName, int64)
	count                 int64
	sum                   uint64
	want                  map[string]int64
	match                 bool
}

func newDemandClasses() *demandClasses {
	d := &demandClasses{seed: maphash.MakeSeed(), byHash: make(map[uint64][]int)}
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

// of returns the class of a workload's demand, an index into shapes.
func (d *demandClasses) of(info *workload.Info) int {
	h := d.hash(info)
	for _, i := range d.byHash[h] {
		if d.sameDemand(info, d.shapes[i]) {
			return i
		}
	}
	i := len(d.shapes)
	d.shapes = append(d.shapes, workloadDemand(info))
	d.byHash[h] = append(d.byHash[h], i)
	return i
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
