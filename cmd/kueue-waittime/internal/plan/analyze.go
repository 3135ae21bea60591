package plan

import (
	"cmp"
	"fmt"
	"slices"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/queueing"
)

// Report is the plan of a whole input, printed as JSON with these keys.
// Nil pointers are figures that do not exist (unstable or unmodelled
// queues, Unfeasible classes).
type Report struct {
	// CapacityBasis is the capacity k_eff divides: "nominal" (the paper's
	// k_eff) or "potential" (nominal + everything borrowable).
	CapacityBasis string        `json:"capacityBasis"`
	ClusterQueues []QueueReport `json:"clusterQueues"`
	// Notes are remarks about the input as a whole.
	Notes []string `json:"notes,omitempty"`
}

// QueueReport is the a-priori model of one ClusterQueue.
type QueueReport struct {
	Name             string `json:"name"`
	Cohort           string `json:"cohort,omitempty"`
	QueueingStrategy string `json:"queueingStrategy"`
	// Active is false when Kueue would admit nothing through the
	// ClusterQueue; InactiveReason says why.
	Active         bool                     `json:"active"`
	InactiveReason string                   `json:"inactiveReason,omitempty"`
	Capacity       []FlavorResourceCapacity `json:"capacity"`
	// KEff is the multi-class k_eff of the Quotable classes (paper Eq. 4)
	// on the chosen capacity basis, with its bottleneck.
	KEff               *int   `json:"kEff"`
	BottleneckFlavor   string `json:"bottleneckFlavor,omitempty"`
	BottleneckResource string `json:"bottleneckResource,omitempty"`
	// KEffPotential is the same count on nominal + all borrowable capacity:
	// how many could run at once were the rest of the cohort idle.
	KEffPotential *int `json:"kEffPotential"`
	// ArrivalRate is Σλ of the Quotable classes, per second; MeanServiceSeconds,
	// ServiceSCV and ArrivalSCV describe their arrival-weighted mixture.
	ArrivalRate        *float64 `json:"arrivalRate"`
	MeanServiceSeconds *float64 `json:"meanServiceSeconds"`
	ServiceSCV         *float64 `json:"serviceSCV"`
	ArrivalSCV         *float64 `json:"arrivalSCV"`
	// Utilization is ρ_eff = Σλ·E[S]/k_eff.
	Utilization *float64 `json:"utilization"`
	Stable      *bool    `json:"stable"`
	cli.Waits
	Classes    []ClassReport    `json:"classes"`
	Priorities []PriorityReport `json:"priorities"`
	Notes      []string         `json:"notes,omitempty"`
}

// FlavorResourceCapacity is one flavor-resource of a ClusterQueue as
// Kueue's snapshot sees it, in Kubernetes quantity notation.
type FlavorResourceCapacity struct {
	Flavor     string `json:"flavor"`
	Resource   string `json:"resource"`
	Nominal    string `json:"nominal"`
	Borrowable string `json:"borrowable"`
	Potential  string `json:"potential"`
}

// ClassReport is one workload class: its partition, its single-class
// k_eff (paper Eq. 3) and the wait of its priority level.
type ClassReport struct {
	Name               string  `json:"name"`
	Priority           int32   `json:"priority"`
	Admissibility      string  `json:"admissibility"`
	Reason             string  `json:"reason,omitempty"`
	KEff               *int    `json:"kEff"`
	BottleneckFlavor   string  `json:"bottleneckFlavor,omitempty"`
	BottleneckResource string  `json:"bottleneckResource,omitempty"`
	ArrivalRate        float64 `json:"arrivalRate"`
	MeanServiceSeconds float64 `json:"meanServiceSeconds"`
	// Utilization is ρ_p of the class's priority level.
	Utilization *float64 `json:"utilization"`
	Stable      *bool    `json:"stable"`
	cli.Waits
}

// PriorityReport is one priority level: the load of all classes of
// priority ≥ p and the wait it implies for classes of priority p.
type PriorityReport struct {
	Priority int32    `json:"priority"`
	Classes  []string `json:"classes"`
	// Utilization is ρ_p = Σ_{p' ≥ p} λ_{p'}·E[S_{p'}]/k_eff.
	Utilization        *float64 `json:"utilization"`
	Stable             *bool    `json:"stable"`
	MeanServiceSeconds *float64 `json:"meanServiceSeconds"`
	ServiceSCV         *float64 `json:"serviceSCV"`
	cli.Waits
}

// analyze builds the report of every ClusterQueue, in name order.
func analyze(in *inputs, states map[string]*queueState, notes snapshotNotes, basis capacity.CapacityBasis) (*Report, error) {
	r := &Report{CapacityBasis: basis.String(), Notes: notes}
	kinds := make([]string, 0, len(in.ignored))
	for k := range in.ignored {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		r.Notes = append(r.Notes, fmt.Sprintf("ignored %d %s object(s): they do not change quotas", in.ignored[k], k))
	}
	for _, name := range sortedQueueNames(states) {
		var classes []Class
		for _, c := range in.classes {
			if c.ClusterQueue == name {
				classes = append(classes, c)
			}
		}
		q, err := analyzeQueue(states[name], classes, basis)
		if err != nil {
			return nil, err
		}
		r.ClusterQueues = append(r.ClusterQueues, q)
	}
	return r, nil
}

func analyzeQueue(st *queueState, classes []Class, basis capacity.CapacityBasis) (QueueReport, error) {
	spec := st.spec
	q := QueueReport{
		Name:             spec.Name,
		Cohort:           string(spec.Spec.CohortName),
		QueueingStrategy: string(cmp.Or(spec.Spec.QueueingStrategy, kueue.BestEffortFIFO)),
		Active:           st.active,
		InactiveReason:   st.reason,
		Capacity:         []FlavorResourceCapacity{},
		Classes:          []ClassReport{},
		Priorities:       []PriorityReport{},
	}
	if q.QueueingStrategy == string(kueue.StrictFIFO) {
		q.Notes = append(q.Notes, "StrictFIFO: head-of-line blocking makes real waits longer than the M/G/k (FCFS) estimate, which is optimistic here")
	}
	if len(classes) == 0 {
		q.Notes = append(q.Notes, "no workload class targets this ClusterQueue")
	}
	if !st.active {
		for _, c := range classes {
			q.Classes = append(q.Classes, ClassReport{
				Name: c.Name, Priority: c.Priority, ArrivalRate: c.ArrivalRate, MeanServiceSeconds: c.MeanService,
				Admissibility: capacity.Unfeasible.String(),
				Reason:        fmt.Sprintf("ClusterQueue %s is inactive (%s)", spec.Name, st.reason),
			})
		}
		return q, nil
	}
	q.Capacity = capacityRows(st.capacity)

	var quotable []Class
	for _, c := range classes {
		cr := ClassReport{Name: c.Name, Priority: c.Priority, ArrivalRate: c.ArrivalRate, MeanServiceSeconds: c.MeanService}
		cl := capacity.Classify(st.capacity, c.Workload)
		if cl.Admissibility == capacity.Invalid {
			return q, fmt.Errorf("ClusterQueue %s, class %s: %w", spec.Name, c.Name, cl.Err)
		}
		cr.Admissibility, cr.Reason = cl.Admissibility.String(), cl.Reason
		k, err := capacity.KEff(st.capacity, c.Workload, basis)
		if err != nil {
			return q, fmt.Errorf("ClusterQueue %s, class %s: %w", spec.Name, c.Name, err)
		}
		if !k.Unbounded {
			cr.KEff = &k.Servers
		}
		cr.BottleneckFlavor, cr.BottleneckResource = k.Flavor, k.Resource
		if cl.Admissibility == capacity.Quotable {
			quotable = append(quotable, c)
		}
		q.Classes = append(q.Classes, cr)
	}
	if len(quotable) == 0 {
		if len(classes) > 0 {
			q.Notes = append(q.Notes, "no Quotable class: nothing here can ever be admitted, so there is no queue to model")
		}
		return q, nil
	}

	mix := make([]capacity.Class, len(quotable))
	allIdle := true
	for i, c := range quotable {
		mix[i] = capacity.Class{Workload: c.Workload, Rate: c.ArrivalRate}
		allIdle = allIdle && c.ArrivalRate == 0
	}
	if allIdle { // no arrivals: weigh the classes equally
		for i := range mix {
			mix[i].Rate = 1
		}
	}
	k, err := capacity.KEffMix(st.capacity, mix, basis)
	if err != nil {
		return q, fmt.Errorf("ClusterQueue %s: k_eff of the class mix: %w", spec.Name, err)
	}
	if kp, err := capacity.KEffMix(st.capacity, mix, capacity.BasisPotential); err == nil && !kp.Unbounded {
		q.KEffPotential = &kp.Servers
	}
	q.BottleneckFlavor, q.BottleneckResource = k.Flavor, k.Resource
	switch {
	case k.Unbounded:
		q.Notes = append(q.Notes, "no quota binds the class mix (unlimited capacity): there is no queue")
		return q, nil
	case k.Servers == 0:
		q.KEff = &k.Servers
		q.Notes = append(q.Notes, fmt.Sprintf("k_eff = 0: the %s capacity %s/%s cannot hold one workload of the mean demand, so the queue model has no server (see kEffPotential and --capacity-basis potential)",
			basis, k.Flavor, k.Resource))
		return q, nil
	case k.Servers > queueing.MaxServers:
		q.Notes = append(q.Notes, fmt.Sprintf("k_eff %d exceeds the largest server count the model evaluates (%d)", k.Servers, queueing.MaxServers))
		return q, nil
	}
	q.KEff = &k.Servers

	levels, err := analyzePriorities(k.Servers, quotable)
	if err != nil {
		return q, fmt.Errorf("ClusterQueue %s: %w", spec.Name, err)
	}
	q.Priorities = levels
	// The lowest level covers every class: its mixture is the queue's.
	all := levels[len(levels)-1]
	var lambda float64
	for _, c := range quotable {
		lambda += c.ArrivalRate
	}
	res, err := queueing.Analyze(queueing.Model{
		Servers:     k.Servers,
		ArrivalRate: lambda,
		MeanService: *all.MeanServiceSeconds,
		ServiceSCV:  *all.ServiceSCV,
		ArrivalSCV:  arrivalSCV(quotable),
	})
	if err != nil {
		return q, fmt.Errorf("ClusterQueue %s: %w", spec.Name, err)
	}
	q.ArrivalRate = cli.Float(lambda)
	q.MeanServiceSeconds = all.MeanServiceSeconds
	q.ServiceSCV = all.ServiceSCV
	q.ArrivalSCV = cli.Float(arrivalSCV(quotable))
	q.Utilization = cli.Float(res.Utilization)
	q.Stable = &res.Stable
	if res.Stable {
		q.Waits = cli.NewWaits(res.Approximation1, res.Whitt)
		q.ProbabilityOfWait = cli.Float(res.WaitProbability)
	}

	byPriority := make(map[int32]PriorityReport, len(levels))
	for _, l := range levels {
		byPriority[l.Priority] = l
	}
	for i := range q.Classes {
		c := &q.Classes[i]
		if c.Admissibility != capacity.Quotable.String() {
			continue
		}
		l := byPriority[c.Priority]
		c.Utilization, c.Stable, c.Waits = l.Utilization, l.Stable, l.Waits
	}
	return q, nil
}

// analyzePriorities applies the paper's priority rule (queueing.
// AnalyzePriorityClasses: class p sees the load of classes ≥ p) to the
// Quotable classes on k servers and returns one level per distinct
// priority, highest first, with the Approximation 1 wait and Whitt's mean
// for the arrival variability of the classes ≥ p.
func analyzePriorities(servers int, classes []Class) ([]PriorityReport, error) {
	pcs := make([]queueing.PriorityClass, len(classes))
	for i, c := range classes {
		pcs[i] = queueing.PriorityClass{Priority: c.Priority, ArrivalRate: c.ArrivalRate, MeanService: c.MeanService, ServiceSCV: c.ServiceSCV}
	}
	results, err := queueing.AnalyzePriorityClasses(servers, pcs)
	if err != nil {
		return nil, err
	}
	var levels []PriorityReport
	for i, res := range results {
		at := slices.IndexFunc(levels, func(l PriorityReport) bool { return l.Priority == res.Priority })
		if at >= 0 {
			levels[at].Classes = append(levels[at].Classes, classes[i].Name)
			continue
		}
		var atOrAbove []Class
		for _, c := range classes {
			if c.Priority >= res.Priority {
				atOrAbove = append(atOrAbove, c)
			}
		}
		whitt, err := queueing.WhittGIGkWait(servers, res.Utilization, res.MeanService, arrivalSCV(atOrAbove), res.ServiceSCV)
		if err != nil {
			return nil, err
		}
		stable := res.Stable
		levels = append(levels, PriorityReport{
			Priority:           res.Priority,
			Classes:            []string{classes[i].Name},
			Utilization:        cli.Float(res.Utilization),
			Stable:             &stable,
			MeanServiceSeconds: cli.Float(res.MeanService),
			ServiceSCV:         cli.Float(res.ServiceSCV),
			Waits:              cli.NewWaits(res.Wait, whitt),
		})
	}
	slices.SortFunc(levels, func(a, b PriorityReport) int { return cmp.Compare(b.Priority, a.Priority) })
	return levels, nil
}

// arrivalSCV is the interarrival SCV of the superposition of the classes'
// arrival streams, by the rate-weighted (asymptotic) approximation
// c_a² ≈ Σ_j (λ_j/Σλ)·c_{a,j}², with equal weights when no class arrives.
func arrivalSCV(classes []Class) float64 {
	var total, weighted, plain float64
	for _, c := range classes {
		total += c.ArrivalRate
		weighted += c.ArrivalRate * c.ArrivalSCV
		plain += c.ArrivalSCV
	}
	if total == 0 {
		return plain / float64(len(classes))
	}
	return weighted / total
}
