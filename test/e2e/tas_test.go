package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibilityapi "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/cluster"
)

// tasFlavor is a flavor of the GPU nodes with topology-aware scheduling:
// one block of two racks, each rack one node of 4 GPUs.
const tasFlavor = "e2e-tas-gpu"

// rackJob is a Job of pods pods of 4 GPUs each that must all run in one
// rack (the pod template's required-topology annotation).
func rackJob(name, namespace string, pods int32) *batchv1.Job {
	j := job(name, namespace, "1", 4, 5*time.Second)
	j.Spec.Parallelism, j.Spec.Completions = new(pods), new(pods)
	j.Spec.Template.Annotations[kueue.PodSetRequiredTopologyAnnotation] = cluster.TopologyRackLabel
	return j
}

// TestTopologyThatCanNeverHoldAJobMakesItUnfeasible runs Kueue's
// topology-aware scheduling on the KWOK GPU nodes, labelled into one block
// of two racks of 4 GPUs: a Job of 2 pods × 4 GPUs required in one rack
// fits the ClusterQueue's 8 GPUs of quota but no rack, so the scheduler's
// attempt labels it Unfeasible with a topology reason, in its Workload's
// condition and in the visibility API; a Job of one such pod is placed in a
// rack and Succeeds.
func TestTopologyThatCanNeverHoldAJobMakesItUnfeasible(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	const ns = "team-tas"
	for _, o := range []client.Object{
		utiltestingapi.MakeTopology("e2e-racks").Levels(cluster.TopologyBlockLabel, cluster.TopologyRackLabel, corev1.LabelHostname).Obj(),
		utiltestingapi.MakeResourceFlavor(tasFlavor).NodeLabel("kueue-waittime.x-k8s.io/accelerator", "gpu").TopologyName("e2e-racks").Obj(),
	} {
		if err := cl.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	tenant(ctx, t, ns, *utiltestingapi.MakeFlavorQuotas(tasFlavor).
		Resource(corev1.ResourceCPU, "8").Resource(corev1.ResourceMemory, "16Gi").Resource(cluster.GPUResource, "8").Obj())
	user, userVisibility, _ := researcher(ctx, t, "tess", ns)
	if err := user.Create(ctx, rackJob("two-pods-in-a-rack", ns, 2)); err != nil {
		t.Fatal(err)
	}
	if err := user.Create(ctx, rackJob("one-pod-in-a-rack", ns, 1)); err != nil {
		t.Fatal(err)
	}

	const want = "allows to fit only 1 out of 2 pod(s)"
	eventually(ctx, t, 2*time.Minute, "the user sees the two-pod Job Unfeasible for its topology", func(ctx context.Context) error {
		s, err := userVisibility.VisibilityV1beta2().LocalQueues(ns).GetPendingWorkloadsSummary(ctx, "lq", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, item := range s.Items {
			if len(item.OwnerReferences) == 0 || item.OwnerReferences[0].Name != "two-pods-in-a-rack" {
				continue
			}
			est := item.WaitTimeEstimate
			switch {
			case est == nil:
				return fmt.Errorf("%s has no estimate", item.Name)
			case est.Admissibility != visibilityapi.AdmissibilityUnfeasible:
				return fmt.Errorf("%s is %s", item.Name, est.Admissibility)
			case !strings.HasPrefix(est.Reason, "topology: pod set main cannot be placed") || !strings.Contains(est.Reason, want):
				t.Fatalf("Unfeasible reason %q, want a topology reason with %q", est.Reason, want)
			}
			return nil
		}
		return fmt.Errorf("the two-pod Job is not pending (%d pending)", len(s.Items))
	})
	eventually(ctx, t, time.Minute, "the two-pod Job's Workload says why",
		workloadConditionSays(user, ns, "two-pods-in-a-rack", "Wait time estimation: the workload is Unfeasible: topology: "))
	eventually(ctx, t, 3*time.Minute, "the one-pod Job Succeeds in a rack", func(ctx context.Context) error {
		var j batchv1.Job
		if err := user.Get(ctx, client.ObjectKey{Namespace: ns, Name: "one-pod-in-a-rack"}, &j); err != nil {
			return err
		}
		if !jobComplete(&j) {
			return fmt.Errorf("succeeded %d, active %d", j.Status.Succeeded, j.Status.Active)
		}
		return nil
	})
}
