package whatif

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibility "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"
	"sigs.k8s.io/kueue/pkg/features"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
	"github.com/kueue-waittime/kueue-waittime/test/controlplane"
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
			got := want{Namespace: q.namespace, PriorityClass: q.priorityClass, Spec: r.Spec}
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
	if os.Getenv("PROJECT_DIR") == "" || os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("PROJECT_DIR and KUBEBUILDER_ASSETS must point at the patched Kueue tree and the control-plane binaries (run through make test)")
	}
	features.SetFeatureGateDuringTest(t, features.WaitTimeEstimation, true)
	ctx := t.Context()
	cp, err := controlplane.Start(controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
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
		summary, err := vis.VisibilityV1beta2().ClusterQueues().GetPendingWorkloadsSummary(ctx, "cq", metav1.GetOptions{})
		if err == nil && len(summary.Items) == 3 {
			last = summary.Items[2].WaitTimeEstimate
		}
		est := got.Status.WaitTimeEstimate
		if code == 0 && est != nil && est.ExpectedWaitMilliseconds != nil && last != nil && last.ExpectedWaitMilliseconds != nil &&
			est.EstimatedAt.Equal(last.EstimatedAt) {
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
