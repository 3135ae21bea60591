package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibilityapi "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"
	controllerconstants "sigs.k8s.io/kueue/pkg/controller/constants"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/cluster"
)

const (
	cpuFlavor = "e2e-default"
	gpuFlavor = "e2e-gpu"
	// batchUserRole is the manifests' ClusterRole for people who run Jobs
	// through LocalQueues (aggregated from the Job, LocalQueue, Workload
	// and pending-workloads viewer roles).
	batchUserRole = "kueue-batch-user-role"
)

// tenant creates a namespace with a LocalQueue "lq" into a new ClusterQueue
// of that name with the given quotas (flavor → resource → quantity).
func tenant(ctx context.Context, t *testing.T, name string, groups ...kueue.FlavorQuotas) {
	t.Helper()
	for _, rf := range []*kueue.ResourceFlavor{
		utiltestingapi.MakeResourceFlavor(cpuFlavor).Obj(),
		utiltestingapi.MakeResourceFlavor(gpuFlavor).NodeLabel("kueue-waittime.x-k8s.io/accelerator", "gpu").Obj(),
	} {
		if err := cl.Client.Create(ctx, rf); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	cq := utiltestingapi.MakeClusterQueue(name)
	for _, g := range groups {
		cq.ResourceGroup(g)
	}
	create(ctx, t,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
		cq.Obj(),
		utiltestingapi.MakeLocalQueue("lq", name).ClusterQueue(name).Obj(),
	)
	t.Cleanup(func() {
		if t.Failed() {
			dump(t, name)
		}
	})
}

// dump logs the state of a namespace's Jobs, Workloads and pods, for a
// failed test.
func dump(t *testing.T, namespace string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var jobs batchv1.JobList
	var wls kueue.WorkloadList
	var pods corev1.PodList
	for _, list := range []client.ObjectList{&jobs, &wls, &pods} {
		if err := cl.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
			t.Logf("dump: %v", err)
			return
		}
	}
	for _, j := range jobs.Items {
		t.Logf("dump: Job %s suspend=%v active=%d succeeded=%d failed=%d conditions=%v", j.Name, j.Spec.Suspend != nil && *j.Spec.Suspend,
			j.Status.Active, j.Status.Succeeded, j.Status.Failed, j.Status.Conditions)
	}
	for _, w := range wls.Items {
		t.Logf("dump: Workload %s admission=%v conditions=%v", w.Name, w.Status.Admission, w.Status.Conditions)
	}
	for _, p := range pods.Items {
		t.Logf("dump: Pod %s node=%q phase=%s conditions=%v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
	}
}

// cpuTenant is a tenant whose ClusterQueue has cpu CPUs (and 16Gi of
// memory) on the default flavor.
func cpuTenant(ctx context.Context, t *testing.T, name, cpu string) {
	t.Helper()
	tenant(ctx, t, name, *utiltestingapi.MakeFlavorQuotas(cpuFlavor).
		Resource(corev1.ResourceCPU, cpu).Resource(corev1.ResourceMemory, "16Gi").Obj())
}

func create(ctx context.Context, t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := cl.Client.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// researcher returns clients of a user who may run Jobs in namespace (the
// manifests' batch-user ClusterRole, bound there) and nothing else, and
// the path of the user's kubeconfig.
func researcher(ctx context.Context, t *testing.T, user, namespace string) (client.Client, *kueueclientset.Clientset, string) {
	t.Helper()
	create(ctx, t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-batch-user", Namespace: namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: batchUserRole},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	})
	path, cfg, err := cl.UserKubeconfig(user)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: cl.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	k, err := kueueclientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, k, path
}

// job is a Job as a user writes it: not suspended (Kueue's webhook
// suspends it), one pod that KWOK runs for runFor, with a maximum
// execution time that Kueue copies into its Workload.
func job(name, namespace string, cpu string, gpus int, runFor time.Duration) *batchv1.Job {
	requests := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse("256Mi"),
	}
	var limits corev1.ResourceList
	if gpus > 0 {
		requests[cluster.GPUResource] = *resource.NewQuantity(int64(gpus), resource.DecimalSI)
		limits = corev1.ResourceList{cluster.GPUResource: requests[cluster.GPUResource]}
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{
			controllerconstants.QueueLabel:              "lq",
			controllerconstants.MaxExecTimeSecondsLabel: strconv.Itoa(int(4 * runFor / time.Second)),
		}},
		Spec: batchv1.JobSpec{
			BackoffLimit: new(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{cluster.RunDurationAnnotation: runFor.String()}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "main", Image: "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits},
					}},
				},
			},
		},
	}
}

// eventually polls check until it returns nil, failing the test with its
// last error after timeout (or when a component of the cluster died).
func eventually(ctx context.Context, t *testing.T, timeout time.Duration, what string, check func(context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := cl.Alive(); err != nil {
			return false, err
		}
		last = check(ctx)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: %v; last: %v", what, err, last)
	}
}

// TestJobsQueueRunAndFinishThroughKueue submits batch/v1 Jobs as a user
// through a LocalQueue whose ClusterQueue holds four of the six: Kueue's
// webhook suspends them, the scheduler admits four, the Job controller
// creates their pods, kube-scheduler binds them to KWOK nodes, and all six
// Succeed; meanwhile the user reads wait-time estimates of the waiting two
// from the visibility API and kueuectl, and an Unfeasible Job carries its
// reason in its Workload's condition and in the API.
// workloadConditionSays returns a check for eventually: the Workload owned
// by Job job in namespace ns, listed as that user, has a QuotaReserved
// condition whose message contains want.
func workloadConditionSays(user client.Client, ns, job, want string) func(context.Context) error {
	return func(ctx context.Context) error {
		var wls kueue.WorkloadList
		if err := user.List(ctx, &wls, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, wl := range wls.Items {
			if len(wl.OwnerReferences) == 0 || wl.OwnerReferences[0].Name != job {
				continue
			}
			cond := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
			if cond == nil || !strings.Contains(cond.Message, want) {
				return fmt.Errorf("QuotaReserved condition %+v", cond)
			}
			return nil
		}
		return fmt.Errorf("no Workload for Job %s", job)
	}
}

func TestJobsQueueRunAndFinishThroughKueue(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	const ns = "team-a"
	cpuTenant(ctx, t, ns, "4")
	cpuTenant(ctx, t, "team-b", "1")
	user, userVisibility, userKubeconfig := researcher(ctx, t, "alice", ns)

	const jobs = 6
	for i := range jobs {
		if err := user.Create(ctx, job("train-"+strconv.Itoa(i), ns, "1", 0, 20*time.Second)); err != nil {
			t.Fatalf("the user creating a Job: %v", err)
		}
	}
	if err := user.Create(ctx, job("too-big", ns, "16", 0, 20*time.Second)); err != nil {
		t.Fatalf("the user creating a Job: %v", err)
	}

	var summary *visibilityapi.PendingWorkloadsSummary
	eventually(ctx, t, 2*time.Minute, "the user sees estimates of the pending Jobs", func(ctx context.Context) error {
		s, err := userVisibility.VisibilityV1beta2().LocalQueues(ns).GetPendingWorkloadsSummary(ctx, "lq", metav1.GetOptions{})
		if err != nil {
			return err
		}
		var quotable, unfeasible int
		for _, item := range s.Items {
			est := item.WaitTimeEstimate
			switch {
			case est == nil:
				return fmt.Errorf("%s has no estimate", item.Name)
			case est.Admissibility == visibilityapi.AdmissibilityUnfeasible:
				unfeasible++
			case est.ExpectedWaitMilliseconds != nil && est.P50WaitMilliseconds != nil:
				quotable++
			}
		}
		if quotable != 2 || unfeasible != 1 {
			return fmt.Errorf("%d Quotable with a wait and %d Unfeasible of %d pending, want 2 and 1", quotable, unfeasible, len(s.Items))
		}
		summary = s
		return nil
	})
	var last int64 = -1
	for _, item := range summary.Items {
		est := item.WaitTimeEstimate
		if !strings.HasPrefix(item.OwnerReferences[0].Name, "train-") {
			if item.OwnerReferences[0].Name != "too-big" || est.Admissibility != visibilityapi.AdmissibilityUnfeasible {
				t.Errorf("%s (of %s) is %s, want the Unfeasible too-big", item.Name, item.OwnerReferences[0].Name, est.Admissibility)
			}
			if want := "cpu 16 > potential 4"; !strings.Contains(est.Reason, want) {
				t.Errorf("Unfeasible reason %q, want it to contain %q", est.Reason, want)
			}
			continue
		}
		if w := *est.ExpectedWaitMilliseconds; w <= 0 || w < last {
			t.Errorf("%s: expected wait %d ms after %d ms: want positive and not decreasing with queue position", item.Name, w, last)
		}
		last = *est.ExpectedWaitMilliseconds
		if *est.P50WaitMilliseconds > *est.P90WaitMilliseconds {
			t.Errorf("%s: P50 %d ms > P90 %d ms", item.Name, *est.P50WaitMilliseconds, *est.P90WaitMilliseconds)
		}
	}

	// The Unfeasible classification rides on the QuotaReserved condition.
	eventually(ctx, t, time.Minute, "the Unfeasible Job's Workload says why",
		workloadConditionSays(user, ns, "too-big", "Wait time estimation: the workload is Unfeasible: "))

	// kueuectl, as the user, shows the columns the estimator feeds.
	if kueuectl := os.Getenv("KUEUECTL"); kueuectl != "" {
		out, err := exec.CommandContext(ctx, kueuectl, "list", "workload", "-n", ns, "--kubeconfig", userKubeconfig).CombinedOutput()
		if err != nil {
			t.Fatalf("kueuectl list workload: %v\n%s", err, out)
		}
		for _, want := range []string{"ADMISSIBILITY", "ETA (P50)", "Unfeasible", "Quotable"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("kueuectl list workload lacks %q:\n%s", want, out)
			}
		}
	} else {
		t.Error("KUEUECTL is not set: make e2e sets it to bin/kueuectl")
	}

	// The user may not read another namespace's queue.
	_, err := userVisibility.VisibilityV1beta2().LocalQueues("team-b").GetPendingWorkloadsSummary(ctx, "lq", metav1.GetOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("reading team-b's LocalQueue as alice: %v, want Forbidden", err)
	}

	eventually(ctx, t, 4*time.Minute, "every Job Succeeds on a KWOK node", func(ctx context.Context) error {
		return jobsComplete(ctx, user, ns, "train-", jobs)
	})
	var pods corev1.PodList
	if err := cl.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	succeeded := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded && strings.HasPrefix(p.Spec.NodeName, "kwok-") {
			succeeded++
		}
	}
	if succeeded != jobs {
		t.Errorf("%d pods Succeeded on KWOK nodes, want %d", succeeded, jobs)
	}
}

func jobComplete(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestGPUJobRunsOnAGPUNode runs a Job asking for a GPU through a
// ClusterQueue with GPU quota on a flavor whose node label Kueue injects:
// its pod lands on a GPU node.
func TestGPUJobRunsOnAGPUNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	const ns = "team-gpu"
	cpuTenant(ctx, t, ns, "4")
	// Kueue's controller writes the new ClusterQueue too (finalizer,
	// status): a stale read conflicts, so read and update again.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cq kueue.ClusterQueue
		if err := cl.Client.Get(ctx, client.ObjectKey{Name: ns}, &cq); err != nil {
			return err
		}
		cq.Spec.ResourceGroups = append(cq.Spec.ResourceGroups, kueue.ResourceGroup{
			CoveredResources: []corev1.ResourceName{cluster.GPUResource},
			Flavors:          []kueue.FlavorQuotas{*utiltestingapi.MakeFlavorQuotas(gpuFlavor).Resource(cluster.GPUResource, "2").Obj()},
		})
		return cl.Client.Update(ctx, &cq)
	}); err != nil {
		t.Fatal(err)
	}
	user, _, _ := researcher(ctx, t, "bob", ns)
	if err := user.Create(ctx, job("gpu-train", ns, "1", 1, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, 3*time.Minute, "the GPU Job Succeeds", func(ctx context.Context) error {
		var j batchv1.Job
		if err := user.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gpu-train"}, &j); err != nil {
			return err
		}
		if !jobComplete(&j) {
			return fmt.Errorf("succeeded %d, active %d", j.Status.Succeeded, j.Status.Active)
		}
		return nil
	})
	var pods corev1.PodList
	if err := cl.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || !strings.HasPrefix(pods.Items[0].Spec.NodeName, "kwok-gpu-") {
		var where []string
		for _, p := range pods.Items {
			where = append(where, p.Name+"@"+p.Spec.NodeName)
		}
		t.Errorf("pods %v, want one on a kwok-gpu node", where)
	}
}

// TestPlainPodsQueueAndRunThroughKueue runs Kueue's plain Pod integration
// (which the manifests' Configuration enables): a user creates three pods of
// one CPU in a LocalQueue whose ClusterQueue holds two; Kueue gates them,
// admits two, the third waits with a forecast, and all three Succeed.
func TestPlainPodsQueueAndRunThroughKueue(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	const ns = "team-pods"
	cpuTenant(ctx, t, ns, "2")
	create(ctx, t,
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "pod-runner", Namespace: ns},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "get", "list", "watch"}}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "frank-pod-runner", Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-runner"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "frank"}},
		})
	user, userVisibility, _ := researcher(ctx, t, "frank", ns)
	const pods = 3
	for i := range pods {
		j := job("pod-"+strconv.Itoa(i), ns, "1", 0, 15*time.Second)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: j.Name, Namespace: ns, Labels: j.Labels, Annotations: j.Spec.Template.Annotations},
			Spec:       j.Spec.Template.Spec,
		}
		if err := user.Create(ctx, pod); err != nil {
			t.Fatalf("the user creating a pod: %v", err)
		}
		if !slices.ContainsFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == "kueue.x-k8s.io/admission" }) {
			t.Errorf("pod %s was created without Kueue's admission scheduling gate: %v", pod.Name, pod.Spec.SchedulingGates)
		}
	}
	eventually(ctx, t, 2*time.Minute, "the waiting pod's forecast", func(ctx context.Context) error {
		s, err := userVisibility.VisibilityV1beta2().LocalQueues(ns).GetPendingWorkloadsSummary(ctx, "lq", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(s.Items) != 1 {
			return fmt.Errorf("%d pending, want 1", len(s.Items))
		}
		est := s.Items[0].WaitTimeEstimate
		if est == nil || est.Admissibility != visibilityapi.AdmissibilityQuotable || est.P50WaitMilliseconds == nil {
			return fmt.Errorf("estimate %+v, want Quotable with a P50", est)
		}
		return nil
	})
	eventually(ctx, t, 3*time.Minute, "every pod Succeeds on a KWOK node", func(ctx context.Context) error {
		for i := range pods {
			var p corev1.Pod
			if err := user.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pod-" + strconv.Itoa(i)}, &p); err != nil {
				return err
			}
			if p.Status.Phase != corev1.PodSucceeded || !strings.HasPrefix(p.Spec.NodeName, "kwok-") {
				return fmt.Errorf("pod %s: phase %s on %q", p.Name, p.Status.Phase, p.Spec.NodeName)
			}
		}
		return nil
	})
}

// TestDRAJobGetsADeviceOnADRANode runs a Job whose pod claims a GPU through
// a ResourceClaimTemplate: Kueue counts the device as the mapped resource
// (quota of two), kube-controller-manager makes the claim, kube-scheduler
// allocates a device from a node's ResourceSlice and binds the pod there,
// and the Job Succeeds. A second Job asking for three devices is
// Unfeasible, with the mapped resource in its reason.
func TestDRAJobGetsADeviceOnADRANode(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	const ns = "team-dra"
	tenant(ctx, t, ns, *utiltestingapi.MakeFlavorQuotas(cpuFlavor).
		Resource(corev1.ResourceCPU, "4").Resource(corev1.ResourceMemory, "16Gi").Resource(draGPU, "2").Obj())
	create(ctx, t,
		utiltesting.MakeResourceClaimTemplate("one-gpu", ns).DeviceRequest("gpu", cluster.DRADeviceClass, 1).Obj(),
		utiltesting.MakeResourceClaimTemplate("three-gpus", ns).DeviceRequest("gpu", cluster.DRADeviceClass, 3).Obj(),
	)
	withClaim := func(j *batchv1.Job, template string) *batchv1.Job {
		spec := &j.Spec.Template.Spec
		spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: new(template)}}
		spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
		return j
	}
	create(ctx, t,
		withClaim(job("dra-train", ns, "1", 0, 5*time.Second), "one-gpu"),
		withClaim(job("dra-too-big", ns, "1", 0, 5*time.Second), "three-gpus"),
	)
	// The claim made from the template lives as long as the pod runs: look
	// for its allocation meanwhile.
	allocated := false
	eventually(ctx, t, 3*time.Minute, "the DRA Job Succeeds", func(ctx context.Context) error {
		var claims resourcev1.ResourceClaimList
		if err := cl.Client.List(ctx, &claims, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, c := range claims.Items {
			if a := c.Status.Allocation; a != nil && len(a.Devices.Results) == 1 && a.Devices.Results[0].Driver == cluster.DRADriver {
				allocated = true
			}
		}
		var j batchv1.Job
		if err := cl.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "dra-train"}, &j); err != nil {
			return err
		}
		if !jobComplete(&j) {
			return fmt.Errorf("succeeded %d, active %d", j.Status.Succeeded, j.Status.Active)
		}
		return nil
	})
	var pods corev1.PodList
	if err := cl.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{batchv1.JobNameLabel: "dra-train"}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || !strings.HasPrefix(pods.Items[0].Spec.NodeName, "kwok-dra-") {
		t.Errorf("%d pods of dra-train, want one on a kwok-dra node", len(pods.Items))
	}
	if !allocated {
		t.Errorf("no ResourceClaim was seen allocated one %s device while the Job ran", cluster.DRADriver)
	}
	if len(pods.Items) == 1 && len(pods.Items[0].Status.ResourceClaimStatuses) != 1 {
		t.Errorf("the pod's resource claim statuses: %+v, want the one claim made from its template", pods.Items[0].Status.ResourceClaimStatuses)
	}
	eventually(ctx, t, time.Minute, "the three-GPU Job is Unfeasible", func(ctx context.Context) error {
		var wls kueue.WorkloadList
		if err := cl.Client.List(ctx, &wls, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, wl := range wls.Items {
			if len(wl.OwnerReferences) == 0 || wl.OwnerReferences[0].Name != "dra-too-big" {
				continue
			}
			cond := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
			if cond == nil || !strings.Contains(cond.Message, "the workload is Unfeasible: ") || !strings.Contains(cond.Message, draGPU+" 3 > potential 2") {
				return fmt.Errorf("QuotaReserved condition %+v", cond)
			}
			return nil
		}
		return fmt.Errorf("no Workload for Job dra-too-big")
	})
}
