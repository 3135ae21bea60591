package whatif

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibility "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/features"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
	"github.com/kueue-waittime/kueue-waittime/internal/harness/controlplane"
)

const jobManifest = `apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: lq
    kueue.x-k8s.io/priority-class: high
    kueue.x-k8s.io/max-exec-time-seconds: "600"
spec:
  parallelism: 3
  template:
    spec:
      restartPolicy: Never
      initContainers:
      - name: fetch
        image: busybox
        resources: {requests: {cpu: "2"}}
      containers:
      - name: main
        image: busybox
        resources: {requests: {cpu: 500m, memory: 1Gi}}
      - name: sidecar
        image: busybox
        resources: {requests: {cpu: 250m}}
`

const podManifest = `apiVersion: v1
kind: Pod
metadata:
  name: one
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  containers:
  - name: main
    image: busybox
    resources: {requests: {cpu: "1", memory: 2Gi}}
`

const jobSetManifest = `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  replicatedJobs:
  - name: driver
    replicas: 1
    template:
      spec:
        parallelism: 1
        template:
          spec:
            containers: [{name: d, image: busybox, resources: {requests: {cpu: "1"}}}]
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 4
        template:
          spec:
            containers: [{name: w, image: busybox, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
`

const workloadManifest = `apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: wl, namespace: team-b}
spec:
  queueName: lq
  priority: 7
  maximumExecutionTimeSeconds: 60
  podSets:
  - name: main
    count: 2
    template:
      spec:
        containers: [{name: c, image: busybox, resources: {requests: {cpu: 250m}}}]
`

func podSet(name string, count int32, requests ...string) visibility.WaitTimeReviewPodSet {
	ps := visibility.WaitTimeReviewPodSet{Name: kueue.PodSetReference(name), Count: count, Requests: corev1.ResourceList{}}
	for i := 0; i < len(requests); i += 2 {
		ps.Requests[corev1.ResourceName(requests[i])] = resource.MustParse(requests[i+1])
	}
	return ps
}

func TestReviewOfManifests(t *testing.T) {
	type want struct {
		Namespace     string
		PriorityClass string
		Spec          visibility.WaitTimeReviewSpec
	}
	cases := map[string]struct {
		manifest string
		want     want
	}{
		"a Job: per-pod requests as Kueue counts them (the largest init container against the containers' sum), its labels": {
			manifest: jobManifest,
			want: want{Namespace: "team-a", PriorityClass: "high", Spec: visibility.WaitTimeReviewSpec{
				LocalQueueName: "lq", MaximumExecutionTimeSeconds: ptr.To[int32](600),
				PodSets: []visibility.WaitTimeReviewPodSet{podSet("main", 3, "cpu", "2", "memory", "1Gi")},
			}},
		},
		"a Job without parallelism: one pod, as the API server defaults it": {
			manifest: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]\n",
			want:     want{Spec: visibility.WaitTimeReviewSpec{PodSets: []visibility.WaitTimeReviewPodSet{podSet("main", 1, "cpu", "100m")}}},
		},
		"a limit without a request counts as the request, as the API server defaults it": {
			manifest: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}, limits: {cpu: 200m, nvidia.com/gpu: 1}}}]\n",
			want:     want{Spec: visibility.WaitTimeReviewSpec{PodSets: []visibility.WaitTimeReviewPodSet{podSet("main", 1, "cpu", "100m", "nvidia.com/gpu", "1")}}},
		},
		"a Pod": {
			manifest: podManifest,
			want: want{Spec: visibility.WaitTimeReviewSpec{
				LocalQueueName: "lq",
				PodSets:        []visibility.WaitTimeReviewPodSet{podSet("main", 1, "cpu", "1", "memory", "2Gi")},
			}},
		},
		"a JobSet: one pod set per replicated job, replicas × parallelism pods": {
			manifest: jobSetManifest,
			want: want{Spec: visibility.WaitTimeReviewSpec{
				LocalQueueName: "lq",
				PodSets: []visibility.WaitTimeReviewPodSet{
					podSet("driver", 1, "cpu", "1"),
					podSet("workers", 8, "cpu", "500m", "memory", "1Gi"),
				},
			}},
		},
		"a Workload: its spec": {
			manifest: workloadManifest,
			want: want{Namespace: "team-b", Spec: visibility.WaitTimeReviewSpec{
				LocalQueueName: "lq", Priority: ptr.To[int32](7), MaximumExecutionTimeSeconds: ptr.To[int32](60),
				PodSets: []visibility.WaitTimeReviewPodSet{podSet("main", 2, "cpu", "250m")},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q, err := readQuestion(context.Background(), strings.NewReader(tc.manifest))
			if err != nil {
				t.Fatal(err)
			}
			r, err := reviewOf(q)
			if err != nil {
				t.Fatal(err)
			}
			got := want{Namespace: q.namespace, Spec: r.Spec}
			if q.job != nil {
				got.PriorityClass = jobframework.WorkloadPriorityClassName(q.job)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("review (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestReadQuestionRefuses(t *testing.T) {
	cases := map[string]struct {
		manifest string
		want     string
	}{
		"nothing":         {manifest: "", want: "the manifest is empty"},
		"a ConfigMap":     {manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", want: "whatif does not take a ConfigMap"},
		"an unknown kind": {manifest: "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: x}\n", want: "decoding the manifest"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := readQuestion(context.Background(), strings.NewReader(tc.manifest))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestWhatIfAgainstKueue runs the command against the patched Kueue on a
// real kube-apiserver: a Job of the shape of three pending workloads is
// answered behind them, with a wait no shorter than the last one's.
func TestWhatIfAgainstKueue(t *testing.T) {
	features.SetFeatureGateDuringTest(t, features.WaitTimeEstimation, true)
	ctx := t.Context()
	cp := controlplane.StartForTest(t)
	if _, err := cp.StartKueue(ctx); err != nil {
		t.Fatal(err)
	}
	vis, err := kueueclientset.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		utiltestingapi.MakeResourceFlavor("default").Obj(),
		utiltestingapi.MakeClusterQueue("cq").QueueingStrategy(kueue.StrictFIFO).
			ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "2").Resource(corev1.ResourceMemory, "8Gi").Obj()).Obj(),
		utiltestingapi.MakeLocalQueue("lq", "team-a").ClusterQueue("cq").Obj(),
	}
	for i := range 5 {
		objs = append(objs, utiltestingapi.MakeWorkload(fmt.Sprintf("w%d", i), "team-a").Queue("lq").
			Request(corev1.ResourceCPU, "1").Request(corev1.ResourceMemory, "1Gi").MaximumExecutionTimeSeconds(600).Obj())
	}
	for _, o := range objs {
		if err := cp.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	manifest := `apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: team-a, labels: {kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/max-exec-time-seconds: "600"}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "1", memory: 1Gi}}}]
`
	deadline := time.Now().Add(60 * time.Second)
	for {
		var out, errOut bytes.Buffer
		root := cli.NewRoot("kueue-waittime", "", "")
		root.AddCommand(NewCommand())
		code := cli.Execute(root, []string{"whatif", "-f", "-", "--kubeconfig", cp.Kubeconfig, "-o", "json"}, strings.NewReader(manifest), &out, &errOut)
		var got visibility.WaitTimeReview
		if code == 0 {
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("output %q: %v", out.String(), err)
			}
		}
		var last *visibility.WaitTimeEstimate
		est := got.Status.WaitTimeEstimate
		summary, err := vis.VisibilityV1beta2().ClusterQueues().GetPendingWorkloadsSummary(ctx, "cq", metav1.GetOptions{})
		// The answer is compared with the refresh that gave it only once that
		// refresh saw all three pending workloads: each of them has its
		// estimate, of the same time. Workloads created in the same second
		// are listed in UID order, so one the refresh did not see yet (its
		// informer event came later) may be listed before one it saw.
		sameRefresh := err == nil && len(summary.Items) == 3 && est != nil
		for _, item := range summary.Items {
			sameRefresh = sameRefresh && item.WaitTimeEstimate != nil && item.WaitTimeEstimate.EstimatedAt.Equal(est.EstimatedAt)
		}
		if sameRefresh {
			last = summary.Items[2].WaitTimeEstimate
		}
		if code == 0 && est != nil && est.ExpectedWaitMilliseconds != nil && last != nil && last.ExpectedWaitMilliseconds != nil {
			if got.Status.PositionInClusterQueue != 3 || *est.ExpectedWaitMilliseconds < *last.ExpectedWaitMilliseconds ||
				got.Status.EffectiveServers == nil || *got.Status.EffectiveServers != 2 {
				t.Fatalf("status %+v, estimate %+v; want position 3, k_eff 2 and a wait ≥ the last pending workload's %d ms", got.Status, est, *last.ExpectedWaitMilliseconds)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no comparable answer in 60 s: exit %d, stderr %q, output %q, last pending %+v", code, errOut.String(), out.String(), last)
		}
		time.Sleep(200 * time.Millisecond)
	}

	var table, errOut bytes.Buffer
	root := cli.NewRoot("kueue-waittime", "", "")
	root.AddCommand(NewCommand())
	if code := cli.Execute(root, []string{"whatif", "-f", "-", "--kubeconfig", cp.Kubeconfig}, strings.NewReader(manifest), &table, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"LOCALQUEUE     team-a/lq", "CLUSTERQUEUE   cq", "POSITION       3", "K_EFF          2 (default/cpu)", "ADMISSIBILITY  Quotable"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
}

// TestCompleteAsKueue completes manifests on a real kube-apiserver, as an
// administrator and as a user who may read nothing: the priority as Kueue's
// job integrations resolve it, the requests with the RuntimeClass's
// overhead and the namespace's LimitRange defaults, an unreadable named
// class an error and an unreadable default a warning.
func TestCompleteAsKueue(t *testing.T) {
	ctx := t.Context()
	cp := controlplane.StartForTest(t)
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "urgent"}, Value: 1000},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "everyday"}, Value: 5, GlobalDefault: true},
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 50},
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "sandboxed"}, Handler: "runsc",
			Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}},
		&corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: "team-a"}, Spec: corev1.LimitRangeSpec{
			Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")}}},
		}},
	} {
		if err := cp.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	admin, err := newReader(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	nobodyConfig, err := cp.UserConfig("nobody")
	if err != nil {
		t.Fatal(err)
	}
	nobody, err := newReader(nobodyConfig)
	if err != nil {
		t.Fatal(err)
	}
	job := func(labels, podSpec string) string {
		return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: team-a, labels: {kueue.x-k8s.io/queue-name: lq" + labels + "}}\n" +
			"spec:\n  template:\n    spec:\n      restartPolicy: Never\n" + podSpec
	}
	withRequest := "      containers: [{name: c, image: busybox, resources: {requests: {cpu: 200m}}}]\n"
	type want struct {
		priority    int32
		podSet      visibility.WaitTimeReviewPodSet
		errContains string
		warnings    []string
	}
	cases := map[string]struct {
		manifest string
		user     client.Client
		given    *int32
		want     want
	}{
		"a WorkloadPriorityClass label": {
			manifest: job(", kueue.x-k8s.io/priority-class: high", withRequest), user: admin,
			want: want{priority: 50, podSet: podSet("main", 1, "cpu", "200m")},
		},
		"the pods' PriorityClass": {
			manifest: job("", "      priorityClassName: urgent\n"+withRequest), user: admin,
			want: want{priority: 1000, podSet: podSet("main", 1, "cpu", "200m")},
		},
		"no class: the global default PriorityClass": {
			manifest: job("", withRequest), user: admin,
			want: want{priority: 5, podSet: podSet("main", 1, "cpu", "200m")},
		},
		"--priority: no class is read": {
			manifest: job(", kueue.x-k8s.io/priority-class: missing", withRequest), user: nobody, given: ptr.To[int32](-3),
			want: want{priority: -3, podSet: podSet("main", 1, "cpu", "200m"), warnings: []string{"Failed adjusting requests for LimitRanges"}},
		},
		"a container without a request takes the LimitRange default; the RuntimeClass adds its overhead": {
			manifest: job("", "      runtimeClassName: sandboxed\n      containers: [{name: c, image: busybox}, {name: d, image: busybox, resources: {requests: {cpu: 1}}}]\n"), user: admin,
			want: want{priority: 5, podSet: podSet("main", 1, "cpu", "1400m")},
		},
		"a Workload's priorityClassRef": {
			manifest: "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: wl, namespace: team-a}\nspec:\n  queueName: lq\n" +
				"  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: high}\n" +
				"  podSets:\n  - name: main\n    count: 2\n    template:\n      spec:\n        containers: [{name: c, image: busybox, resources: {requests: {cpu: 250m}}}]\n",
			user: admin,
			want: want{priority: 50, podSet: podSet("main", 2, "cpu", "250m")},
		},
		"a named class that does not exist is an error": {
			manifest: job(", kueue.x-k8s.io/priority-class: missing", withRequest), user: admin,
			want: want{errContains: "priority class missing"},
		},
		"a named class the user cannot read is an error": {
			manifest: job("", "      priorityClassName: urgent\n"+withRequest), user: nobody,
			want: want{errContains: "priority class urgent"},
		},
		"a default and a LimitRange the user cannot read: priority 0, no defaults, a warning each": {
			manifest: job("", "      containers: [{name: c, image: busybox}]\n"), user: nobody,
			want: want{priority: 0, podSet: visibility.WaitTimeReviewPodSet{Name: "main", Count: 1, Requests: corev1.ResourceList{}},
				warnings: []string{"priority taken as 0", "Failed adjusting requests for LimitRanges"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q, err := readQuestion(ctx, strings.NewReader(tc.manifest))
			if err != nil {
				t.Fatal(err)
			}
			if tc.given != nil {
				q.priority = tc.given
			}
			var warnings []string
			err = q.completeAsKueue(ctx, tc.user, "team-a", func(msg string) { warnings = append(warnings, msg) })
			if tc.want.errContains != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want.errContains) {
					t.Fatalf("error %v, want one containing %q", err, tc.want.errContains)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r, err := reviewOf(q)
			if err != nil {
				t.Fatal(err)
			}
			if q.priority == nil || *q.priority != tc.want.priority {
				t.Errorf("priority %v, want %d", q.priority, tc.want.priority)
			}
			if diff := cmp.Diff([]visibility.WaitTimeReviewPodSet{tc.want.podSet}, r.Spec.PodSets,
				cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("pod sets (-want,+got):\n%s", diff)
			}
			if len(warnings) != len(tc.want.warnings) {
				t.Fatalf("warnings %q, want %d containing %q", warnings, len(tc.want.warnings), tc.want.warnings)
			}
			for i, w := range tc.want.warnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %d %q, want one containing %q", i, warnings[i], w)
				}
			}
		})
	}
}
