package eval

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibility "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload/finish"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/test/controlplane"
)

// Harness runs scenarios against a control plane with Kueue running.
type Harness struct {
	CP *controlplane.ControlPlane
	// PollInterval is how often the visibility API is read while
	// workloads are pending.
	PollInterval time.Duration
	// Progress receives one line per level; nil discards.
	Progress io.Writer
	// Live, when set, receives a redrawn table of the pending workloads
	// (position, admissibility, ETA) at every poll, for a terminal.
	Live io.Writer
	// Namespace, when set, names the namespace of the first level (later
	// levels get "-<index>" appended); by default each level gets a
	// generated name.
	Namespace string
}

// workloadRun is what the harness observed of one workload.
type workloadRun struct {
	name       string
	unfeasible bool
	service    float64
	created    time.Time
	admitted   time.Time
	finished   bool
	// first estimate seen through the visibility API
	seenAt        time.Time
	estimate      *visibility.WaitTimeEstimate
	admissibility string
}

func (h *Harness) progressf(format string, args ...any) {
	if h.Progress != nil {
		fmt.Fprintf(h.Progress, format+"\n", args...)
	}
}

// Run runs every level of a scenario in turn.
func (h *Harness) Run(ctx context.Context, sc *Scenario) (*Report, error) {
	if h.PollInterval <= 0 {
		h.PollInterval = 200 * time.Millisecond
	}
	model, err := sc.capacityModel()
	if err != nil {
		return nil, err
	}
	keff, err := capacity.KEff(model.cq, model.demand, capacity.BasisNominal)
	if err != nil {
		return nil, fmt.Errorf("k_eff of the scenario: %w", err)
	}
	if keff.Servers < 1 || keff.Unbounded {
		return nil, fmt.Errorf("the demand gives k_eff = %d: nothing to queue for", keff.Servers)
	}
	report := &Report{Scenario: sc, KEff: keff.Servers, Bottleneck: keff.Resource}
	if sc.DRA != nil {
		if err := h.createDeviceClass(ctx, sc.DRA); err != nil {
			return nil, err
		}
	}
	rng := rand.New(rand.NewPCG(sc.Seed, sc.Seed^0x5851f42d4c957f2d))
	for i, level := range sc.Levels {
		h.progressf("level %d/%d: target utilization %.2f, %d workloads", i+1, len(sc.Levels), level, sc.JobsPerLevel)
		runs, pendingSamples, err := h.runLevel(ctx, sc, i, level, keff.Servers, rng)
		if err != nil {
			return nil, fmt.Errorf("level %v: %w", level, err)
		}
		lr, wrs := summarize(sc, level, keff.Servers, runs, pendingSamples)
		report.Levels = append(report.Levels, lr)
		report.Workloads = append(report.Workloads, wrs...)
		h.progressf("  observed utilization %.2f, mean wait %.2fs; MAE forecast %s, EMA %.2fs, paper %.2fs",
			lr.ObservedUtilization, lr.ObservedMeanWait, fmtOpt(lr.MAEForecast), lr.MAEEMA, lr.MAEPaper)
	}
	return report, nil
}

func fmtOpt(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2fs", *v)
}

type scenarioModel struct {
	cq     *capacity.ClusterQueue
	demand capacity.Workload
}

func canonical(name string, q resource.Quantity) int64 {
	if name == string(corev1.ResourceCPU) {
		return q.MilliValue()
	}
	return q.Value()
}

func (sc *Scenario) capacityModel() (scenarioModel, error) {
	names := make([]string, 0, len(sc.Quota))
	for r := range sc.Quota {
		names = append(names, r)
	}
	sort.Strings(names)
	fq := capacity.FlavorQuotas{Name: "default"}
	for _, r := range names {
		q, err := resource.ParseQuantity(sc.Quota[r])
		if err != nil {
			return scenarioModel{}, err
		}
		fq.Quotas = append(fq.Quotas, capacity.Quota{Nominal: canonical(r, q)})
	}
	req := map[string]int64{}
	for r, v := range sc.Demand {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return scenarioModel{}, err
		}
		req[r] = canonical(r, q)
	}
	if sc.DRA != nil {
		// Kueue counts the claimed devices as the mapped resource.
		req[sc.DRA.Resource] += sc.DRA.Count
	}
	return scenarioModel{
		cq:     &capacity.ClusterQueue{ResourceGroups: []capacity.ResourceGroup{{Resources: names, Flavors: []capacity.FlavorQuotas{fq}}}},
		demand: capacity.Workload{PodSets: []capacity.PodSet{{Name: "main", Count: 1, Requests: req}}},
	}, nil
}

func (h *Harness) runLevel(ctx context.Context, sc *Scenario, index int, level float64, keff int, rng *rand.Rand) ([]*workloadRun, []int, error) {
	cl := h.CP.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: fmt.Sprintf("eval-%s-", sanitize(sc.Name))}}
	if h.Namespace != "" {
		ns.GenerateName, ns.Name = "", h.Namespace
		if index > 0 {
			ns.Name = fmt.Sprintf("%s-%d", h.Namespace, index)
		}
	}
	if err := cl.Create(ctx, ns); err != nil {
		return nil, nil, err
	}
	rf := utiltestingapi.MakeResourceFlavor("default").Obj()
	if err := cl.Create(ctx, rf); err != nil && !strings.Contains(err.Error(), "already exists") {
		return nil, nil, err
	}
	cqName := fmt.Sprintf("%s-%d", ns.Name, index)
	fq := utiltestingapi.MakeFlavorQuotas("default")
	for r, q := range sc.Quota {
		fq = fq.Resource(corev1.ResourceName(r), q)
	}
	cqw := utiltestingapi.MakeClusterQueue(cqName).ResourceGroup(*fq.Obj())
	if sc.QueueingStrategy != "" {
		cqw = cqw.QueueingStrategy(kueue.QueueingStrategy(sc.QueueingStrategy))
	}
	cq := cqw.Obj()
	if err := cl.Create(ctx, cq); err != nil {
		return nil, nil, err
	}
	lq := utiltestingapi.MakeLocalQueue("eval", ns.Name).ClusterQueue(cqName).Obj()
	if err := cl.Create(ctx, lq); err != nil {
		return nil, nil, err
	}
	if sc.DRA != nil {
		if err := cl.Create(ctx, claimTemplate(ns.Name, sc.DRA)); err != nil {
			return nil, nil, fmt.Errorf("creating the ResourceClaimTemplate: %w", err)
		}
	}
	defer func() {
		bg := context.Background()
		_ = cl.DeleteAllOf(bg, &kueue.Workload{}, client.InNamespace(ns.Name))
		_ = cl.Delete(bg, lq)
		_ = cl.Delete(bg, cq)
		_ = cl.Delete(bg, ns)
	}()

	lambda := level * float64(keff) / sc.MeanService.Seconds()
	n := sc.JobsPerLevel
	offsets := sc.arrivalOffsets(rng, n, lambda)
	runs := make([]*workloadRun, n)
	for i := range runs {
		runs[i] = &workloadRun{name: fmt.Sprintf("w%04d", i), service: sc.sampleService(rng)}
		runs[i].unfeasible = sc.UnfeasibleFraction > 0 && rng.Float64() < sc.UnfeasibleFraction
	}
	byName := make(map[string]*workloadRun, n)
	for _, r := range runs {
		byName[r.name] = r
	}

	watcher, err := h.watchClient()
	if err != nil {
		return nil, nil, err
	}
	w, err := watcher.Watch(ctx, &kueue.WorkloadList{}, client.InNamespace(ns.Name))
	if err != nil {
		return nil, nil, err
	}
	defer w.Stop()
	vis, err := kueueclientset.NewForConfig(h.CP.Config)
	if err != nil {
		return nil, nil, err
	}

	var mu sync.Mutex
	levelCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	remaining := 0
	for _, r := range runs {
		if !r.unfeasible {
			remaining++
		}
	}
	done := make(chan struct{})
	var levelErr error
	// Admissions: seen on the watch; each admitted workload is finished
	// after its service time, as a job integration would.
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type != watch.Modified && ev.Type != watch.Added {
				continue
			}
			wl, ok := ev.Object.(*kueue.Workload)
			if !ok || !apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
				continue
			}
			now := time.Now()
			mu.Lock()
			r := byName[wl.Name]
			if r == nil || !r.admitted.IsZero() {
				mu.Unlock()
				continue
			}
			r.admitted = now
			service := time.Duration(r.service * float64(time.Second))
			if err := checkDRAUsage(wl, sc.DRA); err != nil && levelErr == nil {
				levelErr = err
			}
			mu.Unlock()
			key := client.ObjectKeyFromObject(wl)
			time.AfterFunc(service, func() {
				var fresh kueue.Workload
				err := h.CP.Client.Get(levelCtx, key, &fresh)
				if err == nil {
					err = finish.Finish(levelCtx, h.CP.Client, &fresh, "Succeeded", "finished by the evaluation harness", clock.RealClock{})
				}
				mu.Lock()
				defer mu.Unlock()
				r.finished = true
				if err != nil && levelErr == nil && levelCtx.Err() == nil {
					levelErr = fmt.Errorf("finishing %s: %w", key, err)
				}
				remaining--
				if remaining == 0 {
					close(done)
				}
			})
		}
	}()

	// Predictions: read through the visibility API while workloads wait.
	var pendingSamples []int
	go func() {
		t := time.NewTicker(h.PollInterval)
		defer t.Stop()
		for {
			select {
			case <-levelCtx.Done():
				return
			case <-t.C:
			}
			summary, err := vis.VisibilityV1beta2().ClusterQueues().GetPendingWorkloadsSummary(levelCtx, cqName, metav1.GetOptions{})
			if err != nil {
				continue
			}
			now := time.Now()
			mu.Lock()
			quotable := 0
			for i := range summary.Items {
				item := &summary.Items[i]
				r := byName[item.Name]
				if r == nil {
					continue
				}
				if est := item.WaitTimeEstimate; est != nil {
					if r.admissibility == "" {
						r.admissibility = string(est.Admissibility)
					}
					if r.estimate == nil && est.ExpectedWaitMilliseconds != nil {
						r.estimate, r.seenAt = est.DeepCopy(), now
					}
					if est.Admissibility == visibility.AdmissibilityUnfeasible {
						continue
					}
				}
				quotable++
			}
			pendingSamples = append(pendingSamples, quotable)
			if h.Live != nil {
				renderLive(h.Live, cqName, summary, runs, now)
			}
			mu.Unlock()
		}
	}()

	start := time.Now()
	for i, off := range offsets {
		due := start.Add(time.Duration(off * float64(time.Second)))
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(time.Until(due)):
		}
		demand := sc.Demand
		if runs[i].unfeasible {
			demand = sc.UnfeasibleDemand
		}
		ww := utiltestingapi.MakeWorkload(runs[i].name, ns.Name).Queue("eval")
		for r, q := range demand {
			ww = ww.Request(corev1.ResourceName(r), q)
		}
		wl := ww.Obj()
		if sc.DRA != nil {
			claimDevices(wl)
		}
		mu.Lock()
		runs[i].created = time.Now()
		mu.Unlock()
		if err := cl.Create(ctx, wl); err != nil {
			return nil, nil, err
		}
	}
	timeout := time.Duration(float64(n)*sc.MeanService.Seconds()*float64(time.Second)) + 2*time.Minute
	mu.Lock()
	waiting := remaining > 0
	mu.Unlock()
	if waiting {
		select {
		case <-done:
		case <-time.After(timeout):
			return nil, nil, fmt.Errorf("workloads still unfinished after %v", timeout)
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	cancel()
	mu.Lock()
	defer mu.Unlock()
	if levelErr != nil {
		return nil, nil, levelErr
	}
	return runs, pendingSamples, nil
}

// draClaimName names the ResourceClaimTemplate of a level's namespace and
// the pod claim made from it.
const draClaimName = "devices"

// createDeviceClass creates the scenario's DeviceClass, or keeps the one
// there: DeviceClasses are cluster-scoped, shared by every level.
func (h *Harness) createDeviceClass(ctx context.Context, d *DRASpec) error {
	dc := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: d.DeviceClass}}
	if err := client.IgnoreAlreadyExists(h.CP.Client.Create(ctx, dc)); err != nil {
		return fmt.Errorf("creating DeviceClass %s: %w", d.DeviceClass, err)
	}
	return nil
}

// claimTemplate asks for exactly Count devices of the scenario's
// DeviceClass.
func claimTemplate(namespace string, d *DRASpec) *resourcev1.ResourceClaimTemplate {
	return &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: draClaimName, Namespace: namespace},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{
			Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
				Name: "devices",
				Exactly: &resourcev1.ExactDeviceRequest{
					DeviceClassName: d.DeviceClass,
					AllocationMode:  resourcev1.DeviceAllocationModeExactCount,
					Count:           d.Count,
				},
			}}},
		}},
	}
}

// claimDevices gives the workload's pod template a claim from the level's
// ResourceClaimTemplate, consumed by its container, as Kueue's job
// integrations copy it from a Job's pod template.
func claimDevices(wl *kueue.Workload) {
	for i := range wl.Spec.PodSets {
		spec := &wl.Spec.PodSets[i].Template.Spec
		spec.ResourceClaims = append(spec.ResourceClaims, corev1.PodResourceClaim{Name: draClaimName, ResourceClaimTemplateName: new(draClaimName)})
		for j := range spec.Containers {
			spec.Containers[j].Resources.Claims = append(spec.Containers[j].Resources.Claims, corev1.ResourceClaim{Name: draClaimName})
		}
	}
}

// checkDRAUsage reports an admitted workload whose quota usage does not
// hold the claimed devices as the mapped resource: the run would not be
// measuring what the scenario says.
func checkDRAUsage(wl *kueue.Workload, d *DRASpec) error {
	if d == nil || wl.Status.Admission == nil {
		return nil
	}
	var held int64
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		q := psa.ResourceUsage[corev1.ResourceName(d.Resource)]
		held += q.Value()
	}
	if held != d.Count {
		return fmt.Errorf("workload %s was admitted holding %d %s, not the %d devices it claims through DRA", wl.Name, held, d.Resource, d.Count)
	}
	return nil
}

func (h *Harness) watchClient() (client.WithWatch, error) {
	return client.NewWithWatch(h.CP.Config, client.Options{Scheme: h.CP.Scheme})
}

func sanitize(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 30 {
		out = out[:30]
	}
	return out
}
