package scenario

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
)

// Replica names the Kubernetes objects of one (level, seed) replica of a
// Spec, so that replicas run one after the other (or side by side) on one
// control plane without sharing quota:
//
//   - cluster-scoped objects the replica owns are named "<Prefix>-<name>":
//     its ClusterQueues, its cohorts (so that each replica's queues borrow
//     only from each other) and its WorkloadPriorityClasses (per replica
//     too, so that a replica's objects can all be deleted with it and two
//     specs giving one priority class different values cannot clash);
//   - namespaced objects live in Namespace: one LocalQueue per
//     ClusterQueue, named after the queue, the ResourceClaimTemplates and
//     the Workloads;
//   - ResourceFlavors and DeviceClasses carry no per-replica state and keep
//     the Spec's names: create them once and ignore AlreadyExists.
type Replica struct {
	Prefix    string
	Namespace string
}

// ClusterQueueName is the name of the replica's ClusterQueue for a queue.
func (r Replica) ClusterQueueName(queue string) string { return r.Prefix + "-" + queue }

// CohortName is the name of the replica's cohort for a Spec cohort.
func (r Replica) CohortName(cohort string) string { return r.Prefix + "-" + cohort }

// PriorityClassName is the name of the replica's WorkloadPriorityClass for
// a priorityClasses entry.
func (r Replica) PriorityClassName(name string) string { return r.Prefix + "-" + name }

// LocalQueueName is the name of the LocalQueue (in Namespace) an arrival
// is submitted through: its class's (see QueueSpec.LocalQueueOf), else,
// for an arrival planned without one, its queue's, named after the queue.
func (r Replica) LocalQueueName(a Arrival) string {
	if a.LocalQueue != "" {
		return a.LocalQueue
	}
	return a.Queue
}

// Validate checks that every name the replica gives is valid: Namespace
// and the prefixed names must be DNS-1123 labels (the priority class name
// is also a label value, at most 63 characters).
func (r Replica) Validate(s *Spec) error {
	if err := checkLabel("replica namespace", r.Namespace); err != nil {
		return err
	}
	if err := checkLabel("replica prefix", r.Prefix); err != nil {
		return err
	}
	check := func(kind, name, built string) error {
		if len(validation.IsDNS1123Label(built)) > 0 {
			return fmt.Errorf("replica prefix %q: the %s name %q for %s is not a DNS-1123 label (at most 63 characters): use a shorter prefix", r.Prefix, kind, built, name)
		}
		return nil
	}
	for _, q := range s.ClusterQueues {
		if err := check("ClusterQueue", q.Name, r.ClusterQueueName(q.Name)); err != nil {
			return err
		}
		if q.Cohort != "" {
			if err := check("cohort", q.Cohort, r.CohortName(q.Cohort)); err != nil {
				return err
			}
		}
	}
	for _, pc := range sortedKeys(s.PriorityClasses) {
		if err := check("WorkloadPriorityClass", pc, r.PriorityClassName(pc)); err != nil {
			return err
		}
	}
	return nil
}

// BuildResourceFlavors returns the Spec's flavors, in order; shared by replicas.
func (s *Spec) BuildResourceFlavors() []*kueue.ResourceFlavor {
	var out []*kueue.ResourceFlavor
	for _, f := range s.FlavorNames() {
		out = append(out, utiltestingapi.MakeResourceFlavor(f).Obj())
	}
	return out
}

// ReplicaObjects are what a replica creates before its first workload, in
// creation order: its namespace, the scenario's priority classes,
// ClusterQueues and LocalQueues.
func (s *Spec) ReplicaObjects(r Replica) []client.Object {
	objects := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.Namespace}}}
	for _, o := range s.BuildPriorityClasses(r) {
		objects = append(objects, o)
	}
	for _, o := range s.BuildClusterQueues(r) {
		objects = append(objects, o)
	}
	for _, o := range s.BuildLocalQueues(r) {
		objects = append(objects, o)
	}
	return objects
}

// BuildPriorityClasses returns the replica's priority classes, sorted by
// name.
func (s *Spec) BuildPriorityClasses(r Replica) []*kueue.WorkloadPriorityClass {
	var out []*kueue.WorkloadPriorityClass
	for _, pc := range sortedKeys(s.PriorityClasses) {
		out = append(out, utiltestingapi.MakeWorkloadPriorityClass(r.PriorityClassName(pc)).PriorityValue(s.PriorityClasses[pc]).Obj())
	}
	return out
}

// BuildClusterQueues returns the replica's ClusterQueues, in Spec order: cohort,
// queueing strategy, preemption, and one resource group whose flavors come
// in Flavors order, each with the queue's resources sorted by name,
// nominal quota, borrowingLimit and lendingLimit. The Spec must be valid.
func (s *Spec) BuildClusterQueues(r Replica) []*kueue.ClusterQueue {
	var out []*kueue.ClusterQueue
	for _, q := range s.ClusterQueues {
		w := utiltestingapi.MakeClusterQueue(r.ClusterQueueName(q.Name))
		if q.Cohort != "" {
			w = w.Cohort(kueue.CohortReference(r.CohortName(q.Cohort)))
		}
		if q.QueueingStrategy != "" {
			w = w.QueueingStrategy(kueue.QueueingStrategy(q.QueueingStrategy))
		}
		if q.Preemption != nil {
			w = w.Preemption(*q.Preemption.DeepCopy())
		}
		if q.AdmissionFairSharing {
			w = w.AdmissionMode(kueue.UsageBasedAdmissionFairSharing)
		}
		var fqs []kueue.FlavorQuotas
		for _, f := range s.FlavorNames() {
			rs, ok := q.Quota[f]
			if !ok {
				continue
			}
			fq := utiltestingapi.MakeFlavorQuotas(f)
			for _, res := range sortedKeys(rs) {
				fq = fq.Resource(corev1.ResourceName(res), rs[res].Nominal, rs[res].BorrowingLimit, rs[res].LendingLimit)
			}
			fqs = append(fqs, *fq.Obj())
		}
		out = append(out, w.ResourceGroup(fqs...).Obj())
	}
	return out
}

// BuildLocalQueues returns the replica's LocalQueues, in Spec order: each
// ClusterQueue's, named after it, or those its classes name (see
// QueueSpec.LocalQueues).
func (s *Spec) BuildLocalQueues(r Replica) []*kueue.LocalQueue {
	var out []*kueue.LocalQueue
	for _, q := range s.ClusterQueues {
		for _, lq := range q.LocalQueues() {
			out = append(out, utiltestingapi.MakeLocalQueue(lq, r.Namespace).ClusterQueue(r.ClusterQueueName(q.Name)).Obj())
		}
	}
	return out
}

// draSpecs are the distinct device claims of the classes (DeviceClass and
// Count), sorted.
func (s *Spec) draSpecs() []DRASpec {
	var out []DRASpec
	for _, q := range s.ClusterQueues {
		for _, c := range q.Classes {
			if c.DRA == nil {
				continue
			}
			d := DRASpec{DeviceClass: c.DRA.DeviceClass, Count: c.DRA.Count}
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	slices.SortFunc(out, func(a, b DRASpec) int {
		return cmp.Or(strings.Compare(a.DeviceClass, b.DeviceClass), cmp.Compare(a.Count, b.Count))
	})
	return out
}

// BuildDeviceClasses returns the DeviceClasses the classes claim from, sorted;
// shared by replicas (create once, ignore AlreadyExists). Kueue's
// Configuration must map them ([Spec.DeviceClassMappings]).
func (s *Spec) BuildDeviceClasses() []*resourcev1.DeviceClass {
	var names []string
	for _, d := range s.draSpecs() {
		if !slices.Contains(names, d.DeviceClass) {
			names = append(names, d.DeviceClass)
		}
	}
	var out []*resourcev1.DeviceClass
	for _, n := range names {
		out = append(out, &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	return out
}

// ClaimTemplateName names the ResourceClaimTemplate of a device claim:
// one per distinct DeviceClass and Count, since classes may claim
// differently.
func ClaimTemplateName(d *DRASpec) string {
	return fmt.Sprintf("%s-%s-%d", draClaimName, d.DeviceClass, d.Count)
}

// BuildClaimTemplates returns the ResourceClaimTemplates of a replica's namespace:
// one per distinct device claim (see ClaimTemplateName), each asking for
// exactly Count devices as claimTemplate does.
func (s *Spec) BuildClaimTemplates(namespace string) []*resourcev1.ResourceClaimTemplate {
	var out []*resourcev1.ResourceClaimTemplate
	for _, d := range s.draSpecs() {
		out = append(out, claimTemplate(namespace, &d))
	}
	return out
}

// BuildWorkload returns the Workload of one arrival of a plan, in the replica's
// namespace and LocalQueue: one pod requesting the arrival's demand; with
// a priority class, the kueue.x-k8s.io/priority-class label, the
// priorityClassRef of the replica's WorkloadPriorityClass and its value as
// spec.priority, as Kueue's job reconciler builds a job's Workload (it
// resolves the value when it creates the Workload; a Workload created
// directly must carry it); with DRA, a pod claim from the arrival's
// ResourceClaimTemplate, as claimDevices gives it. When the
// scenario's prior is none, a workload of a class with a bounded service
// time declares spec.maximumExecutionTimeSeconds as eval --cluster's Job
// declares it (see maxExecSeconds); otherwise none, so that the scenarios
// with the operator's prior keep their inputs.
func (s *Spec) BuildWorkload(r Replica, a Arrival) *kueue.Workload {
	w := utiltestingapi.MakeWorkload(a.Name, r.Namespace).Queue(kueue.LocalQueueName(r.LocalQueueName(a)))
	for _, res := range sortedKeys(a.Demand) {
		w = w.Request(corev1.ResourceName(res), a.Demand[res])
	}
	if a.PriorityClass != "" {
		pc := r.PriorityClassName(a.PriorityClass)
		w = w.Label(constants.WorkloadPriorityClassLabel, pc).WorkloadPriorityClassRef(pc).Priority(a.Priority)
	}
	wl := w.Obj()
	if s.Prior == PriorNone {
		if limit, ok := s.maxExecSeconds(a.Queue, a.Class); ok {
			wl.Spec.MaximumExecutionTimeSeconds = &limit
		}
	}
	if a.DRA != nil {
		claimDevices(wl)
		name := ClaimTemplateName(a.DRA)
		for i := range wl.Spec.PodSets {
			claims := wl.Spec.PodSets[i].Template.Spec.ResourceClaims
			for j := range claims {
				if claims[j].Name == draClaimName {
					claims[j].ResourceClaimTemplateName = new(name)
				}
			}
		}
	}
	return wl
}

// draClaimName names the pod claim made from a ResourceClaimTemplate.
const draClaimName = "devices"

// claimTemplate asks for exactly Count devices of the DeviceClass.
func claimTemplate(namespace string, d *DRASpec) *resourcev1.ResourceClaimTemplate {
	return &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: ClaimTemplateName(d), Namespace: namespace},
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

// claimDevices gives the workload's pod template a claim from a
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

// CheckDRAUsage reports an admitted workload whose quota usage does not
// hold the claimed devices as the mapped resource: the run would not be
// measuring what the scenario says.
func CheckDRAUsage(wl *kueue.Workload, d *DRASpec) error {
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

// maxExecMarginSeconds is added to a class's longest service time in its
// Jobs' maximum execution time: Kueue counts the time from admission, which
// includes the pod's creation, binding and completion.
const maxExecMarginSeconds = 5

// serviceLimit is the longest service time a class's workloads can have
// (the mean of a deterministic law, TruncateAt times the mean of a
// truncated one), in seconds; false when unbounded.
func (s *Spec) serviceLimit(queue, class string) (float64, bool) {
	for _, q := range s.ClusterQueues {
		if q.Name != queue {
			continue
		}
		for _, c := range q.Classes {
			if c.Name != class {
				continue
			}
			switch {
			case c.Service.Distribution == "deterministic":
				return c.MeanService.Seconds(), true
			case c.Service.TruncateAt > 0:
				return c.Service.TruncateAt * c.MeanService.Seconds(), true
			}
		}
	}
	return 0, false
}

// maxExecSeconds is the maximum execution time a class's workloads declare:
// its serviceLimit rounded up to whole seconds plus maxExecMarginSeconds;
// false when the class's service time is unbounded.
func (s *Spec) maxExecSeconds(queue, class string) (int32, bool) {
	limit, ok := s.serviceLimit(queue, class)
	if !ok {
		return 0, false
	}
	return int32(math.Ceil(limit)) + maxExecMarginSeconds, true
}
