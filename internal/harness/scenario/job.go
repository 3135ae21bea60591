package scenario

import (
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/cluster"
)

// BuildJob returns the Job of one arrival, as a user writes it: in the
// replica's LocalQueue (and WorkloadPriorityClass), not suspended (Kueue's
// webhook suspends it), one pod requesting the arrival's demand that KWOK
// runs for the arrival's service time. When the class's service time is
// bounded, the Job declares the bound (plus maxExecMarginSeconds) as its
// maximum execution time, as a user declares a time limit: without an
// operator's prior, that is what the estimator's a-priori waits start from
// until the ClusterQueue has seen enough completions.
func (s *Spec) BuildJob(r Replica, a Arrival) (*batchv1.Job, error) {
	requests := corev1.ResourceList{}
	for res, q := range a.Demand {
		v, err := resource.ParseQuantity(q)
		if err != nil {
			return nil, fmt.Errorf("%s: demand %s: %w", a.Name, res, err)
		}
		requests[corev1.ResourceName(res)] = v
	}
	labels := map[string]string{constants.QueueLabel: r.LocalQueueName(a)}
	if a.PriorityClass != "" {
		labels[constants.WorkloadPriorityClassLabel] = r.PriorityClassName(a.PriorityClass)
	}
	if limit, ok := s.maxExecSeconds(a.Queue, a.Class); ok {
		labels[constants.MaxExecTimeSecondsLabel] = strconv.Itoa(int(limit))
	}
	runFor := time.Duration(a.Service * float64(time.Second)).Round(time.Millisecond)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: a.Name, Namespace: r.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit: new(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{cluster.RunDurationAnnotation: runFor.String()}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "main", Image: "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{Requests: requests},
					}},
				},
			},
		},
	}, nil
}
