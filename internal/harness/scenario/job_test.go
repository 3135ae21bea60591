package scenario

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/cluster"
)

func TestBuildJobOfAnArrival(t *testing.T) {
	pod := func(runFor string, requests corev1.ResourceList) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{cluster.RunDurationAnnotation: runFor}},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "main", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: requests},
				}},
			},
		}
	}
	cases := map[string]struct {
		arrival Arrival
		want    *batchv1.Job
		wantErr bool
	}{
		"in its LocalQueue, running for its service time": {
			arrival: Arrival{Name: "w0001", Queue: "team-a", Class: "unbounded", Demand: map[string]string{"cpu": "500m", "memory": "64Mi"}, Service: 2.3456},
			want: &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: "w0001", Namespace: "ns", Labels: map[string]string{constants.QueueLabel: "team-a"}},
				Spec: batchv1.JobSpec{BackoffLimit: new(int32(0)), Template: pod("2.346s", corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi"),
				})},
			},
		},
		"with the replica's WorkloadPriorityClass and the class's longest service as its time limit": {
			arrival: Arrival{Name: "w0002", Queue: "team-b", Class: "bounded", PriorityClass: "high", Priority: 1000, Demand: map[string]string{"cpu": "20"}, Service: 1},
			want: &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: "w0002", Namespace: "ns", Labels: map[string]string{
					constants.QueueLabel: "team-b", constants.WorkloadPriorityClassLabel: "r1-high",
					// 3 × 2.5 s, rounded up, and the margin.
					constants.MaxExecTimeSecondsLabel: "13",
				}},
				Spec: batchv1.JobSpec{BackoffLimit: new(int32(0)), Template: pod("1s", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20")})},
			},
		},
		"a demand that is not a quantity": {
			arrival: Arrival{Name: "w0003", Queue: "team-a", Demand: map[string]string{"cpu": "lots"}, Service: 1},
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := validSpec()
			spec.ClusterQueues[0].Classes = append(spec.ClusterQueues[0].Classes, ClassSpec{Name: "unbounded", Share: 1, MeanService: Duration{2 * time.Second}})
			spec.ClusterQueues[1].Classes = append(spec.ClusterQueues[1].Classes, ClassSpec{Name: "bounded", Share: 1, MeanService: Duration{2500 * time.Millisecond},
				Service: ServiceSpec{TruncateAt: 3}})
			got, err := spec.BuildJob(testReplica, tc.arrival)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error: %t", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Job (-want +got):\n%s", diff)
			}
		})
	}
}
