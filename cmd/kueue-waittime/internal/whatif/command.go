// Package whatif implements `kueue-waittime whatif`: how long a job would
// wait if it were submitted now, asked of a running Kueue's WaitTimeReview
// API before the job is created.
package whatif

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibility "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/controller/jobs/job"
	"sigs.k8s.io/kueue/pkg/controller/jobs/jobset"
	"sigs.k8s.io/kueue/pkg/controller/jobs/pod"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
)

// NewCommand returns the whatif command.
func NewCommand() *cobra.Command {
	var f flags
	cmd := &cobra.Command{
		Use:   "whatif -f FILE",
		Short: "How long a job would wait if submitted now (Kueue's WaitTimeReview)",
		Long: `whatif reads a manifest (batch/v1 Job, v1 Pod, JobSet v1alpha2 or Kueue
Workload), derives its pod sets with Kueue's own job integrations, and asks the
running Kueue's visibility API (a WaitTimeReview: nothing is created) how long it
would wait for its quota in its LocalQueue: admissibility, position, k_eff and
bottleneck for its shape, expected wait, P50 and P90.

The LocalQueue is --local-queue, else the manifest's kueue.x-k8s.io/queue-name
label (spec.queueName for a Workload); the namespace --namespace, else the
manifest's, else the kubeconfig's. A kueue.x-k8s.io/priority-class label is
resolved to its WorkloadPriorityClass value with your credentials.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := cli.ParseFormat(f.output)
			if err != nil {
				return err
			}
			if f.file == "" {
				return cli.FlagError("filename", "is required")
			}
			in := cmd.InOrStdin()
			if f.file != "-" {
				file, err := os.Open(f.file)
				if err != nil {
					return err
				}
				defer file.Close()
				in = file
			}
			return run(cmd.Context(), f, format, in, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&f.file, "filename", "f", "", "the manifest `FILE` (- for standard input); the first object in it")
	fs.StringVar(&f.localQueue, "local-queue", "", "the LocalQueue `NAME` (default: the manifest's queue-name label)")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "the `NAMESPACE` (default: the manifest's, else the kubeconfig's)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "the kubeconfig `FILE` (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	cli.AddOutputFlag(cmd, &f.output)
	return cmd
}

type flags struct {
	file, localQueue, namespace, kubeconfig, output string
}

// question is what a manifest asks.
type question struct {
	namespace     string
	localQueue    kueue.LocalQueueName
	priorityClass string
	priority      *int32
	maxExec       *int32
	podSets       []kueue.PodSet
}

func run(ctx context.Context, f flags, format cli.Format, in io.Reader, out io.Writer) error {
	q, err := readQuestion(ctx, in)
	if err != nil {
		return err
	}
	if f.localQueue != "" {
		q.localQueue = kueue.LocalQueueName(f.localQueue)
	}
	if q.localQueue == "" {
		return cli.Usagef("no LocalQueue: give --local-queue or the %s label", constants.QueueLabel)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.kubeconfig
	config := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	namespace := f.namespace
	if namespace == "" {
		namespace = q.namespace
	}
	if namespace == "" {
		if namespace, _, err = config.Namespace(); err != nil {
			return err
		}
	}
	restConfig, err := config.ClientConfig()
	if err != nil {
		return err
	}
	client, err := kueueclientset.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	review, err := reviewOf(q)
	if err != nil {
		return err
	}
	if q.priority == nil && q.priorityClass != "" {
		wpc, err := client.KueueV1beta2().WorkloadPriorityClasses().Get(ctx, q.priorityClass, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("priority class %s: %w", q.priorityClass, err)
		}
		review.Spec.Priority = &wpc.Value
	}
	got, err := client.VisibilityV1beta2().WaitTimeReviews(namespace).Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	got.Namespace = namespace
	if format == cli.FormatJSON {
		return cli.WriteJSON(out, got)
	}
	return render(out, got)
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{batchv1.AddToScheme, corev1.AddToScheme, jobsetapi.AddToScheme, kueue.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// readQuestion decodes the first object of in and derives its pod sets
// with Kueue's job integrations.
func readQuestion(ctx context.Context, in io.Reader) (question, error) {
	var raw runtime.RawExtension
	if err := utilyaml.NewYAMLOrJSONDecoder(in, 4096).Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return question{}, cli.Usagef("the manifest is empty")
		}
		return question{}, fmt.Errorf("reading the manifest: %w", err)
	}
	obj, gvk, err := serializer.NewCodecFactory(scheme).UniversalDeserializer().Decode(raw.Raw, nil, nil)
	if err != nil {
		return question{}, fmt.Errorf("decoding the manifest (a batch/v1 Job, v1 Pod, jobset.x-k8s.io/v1alpha2 JobSet or kueue.x-k8s.io/v1beta2 Workload): %w", err)
	}
	var q question
	switch o := obj.(type) {
	case *kueue.Workload:
		q = question{namespace: o.Namespace, localQueue: o.Spec.QueueName, priority: o.Spec.Priority, maxExec: o.Spec.MaximumExecutionTimeSeconds, podSets: o.Spec.PodSets}
		if o.Spec.PriorityClassRef != nil && o.Spec.PriorityClassRef.Kind == kueue.WorkloadPriorityClassKind {
			q.priorityClass = o.Spec.PriorityClassRef.Name
		}
		return q, nil
	case *batchv1.Job:
		defaultJobSpec(&o.Spec)
		q.podSets, err = (*job.Job)(o).PodSets(ctx, nil)
	case *corev1.Pod:
		q.podSets, err = pod.FromObject(o).PodSets(ctx, nil)
	case *jobsetapi.JobSet:
		for i := range o.Spec.ReplicatedJobs {
			rj := &o.Spec.ReplicatedJobs[i]
			if rj.Replicas == 0 {
				rj.Replicas = 1 // the CRD's default
			}
			defaultJobSpec(&rj.Template.Spec)
		}
		q.podSets, err = (*jobset.JobSet)(o).PodSets(ctx, nil)
	default:
		return question{}, cli.Usagef("whatif does not take a %s", gvk.Kind)
	}
	if err != nil {
		return question{}, fmt.Errorf("deriving the pod sets of %s %s: %w", gvk.Kind, obj.(metav1.Object).GetName(), err)
	}
	meta := obj.(interface {
		metav1.Object
		runtime.Object
	})
	q.namespace = meta.GetNamespace()
	q.localQueue = jobframework.QueueNameForObject(meta)
	q.priorityClass = meta.GetLabels()[constants.WorkloadPriorityClassLabel]
	q.maxExec = jobframework.MaximumExecutionTimeSecondsForObject(meta)
	return q, nil
}

// defaultJobSpec sets what Kueue's job integration reads and the API
// server defaults: a manifest is not defaulted, and Kueue reads parallelism
// as the server leaves it (1 when unset).
func defaultJobSpec(spec *batchv1.JobSpec) {
	if spec.Parallelism == nil {
		spec.Parallelism = ptr.To[int32](1)
	}
}

// reviewOf is the WaitTimeReview of a question: each pod set's per-pod
// requests as Kueue counts them against quota (workload.Info's total over
// the count), a container's limit standing for a request it lacks, as the
// API server defaults a pod before Kueue sees it.
func reviewOf(q question) (*visibility.WaitTimeReview, error) {
	podSets := make([]kueue.PodSet, len(q.podSets))
	for i := range q.podSets {
		q.podSets[i].DeepCopyInto(&podSets[i])
		workload.UseLimitsAsMissingRequestsInPod(&podSets[i].Template.Spec)
	}
	info := workload.NewInfo(&kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: podSets}})
	review := &visibility.WaitTimeReview{Spec: visibility.WaitTimeReviewSpec{
		LocalQueueName: q.localQueue, Priority: q.priority, MaximumExecutionTimeSeconds: q.maxExec,
	}}
	for _, ps := range info.TotalRequests {
		requests := corev1.ResourceList{}
		if ps.Requests != nil {
			ps.Requests.ForEach(func(name corev1.ResourceName, v int64) {
				if ps.Count > 0 {
					v /= int64(ps.Count)
				}
				requests[name] = quantity(name, v)
			})
		}
		review.Spec.PodSets = append(review.Spec.PodSets, visibility.WaitTimeReviewPodSet{Name: ps.Name, Count: ps.Count, Requests: requests})
	}
	if len(review.Spec.PodSets) == 0 {
		return nil, cli.Usagef("the manifest has no pod set")
	}
	return review, nil
}

// quantity is the inverse of Kueue's resources.ResourceValue: milli-units
// for CPU, units for everything else.
func quantity(name corev1.ResourceName, v int64) resource.Quantity {
	if name == corev1.ResourceCPU {
		return *resource.NewMilliQuantity(v, resource.DecimalSI)
	}
	if name == corev1.ResourceMemory || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) || name == corev1.ResourceEphemeralStorage {
		return *resource.NewQuantity(v, resource.BinarySI)
	}
	return *resource.NewQuantity(v, resource.DecimalSI)
}

func render(out io.Writer, r *visibility.WaitTimeReview) error {
	st := r.Status
	tw := cli.NewTable(out)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("LOCALQUEUE", r.Namespace+"/"+string(r.Spec.LocalQueueName))
	row("CLUSTERQUEUE", string(st.ClusterQueue))
	row("PRIORITY", fmt.Sprint(st.Priority))
	row("POSITION", fmt.Sprint(st.PositionInClusterQueue))
	keff := "unbounded"
	if st.EffectiveServers != nil {
		keff = fmt.Sprintf("%d (%s/%s)", *st.EffectiveServers, st.BottleneckFlavor, st.BottleneckResource)
	}
	row("K_EFF", keff)
	if st.QueueStable != nil {
		row("QUEUE STABLE", fmt.Sprint(*st.QueueStable))
	}
	est := st.WaitTimeEstimate
	if est == nil {
		row("ESTIMATE", "none yet (the estimator has not refreshed this ClusterQueue)")
		return tw.Flush()
	}
	row("ADMISSIBILITY", string(est.Admissibility))
	if est.Reason != "" {
		row("REASON", est.Reason)
	}
	row("METHOD", string(est.Method))
	ms := func(v *int64) string {
		if v == nil {
			return "-"
		}
		return cli.Seconds(float64(*v) / 1000)
	}
	beyond := ""
	if est.BeyondHorizon {
		beyond = " (at least: beyond the horizon)"
	}
	row("EXPECTED WAIT", ms(est.ExpectedWaitMilliseconds)+beyond)
	row("P50", ms(est.P50WaitMilliseconds))
	row("P90", ms(est.P90WaitMilliseconds))
	if est.EstimatedAt != nil {
		row("AS OF", est.EstimatedAt.UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	return tw.Flush()
}
