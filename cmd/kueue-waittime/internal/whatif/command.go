// Package whatif implements `kueue-waittime whatif`: how long a job would
// wait if it were submitted now, asked of a running Kueue's WaitTimeReview
// API before the job is created.
package whatif

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibility "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"
	kueueconstants "sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/controller/jobs/job"
	"sigs.k8s.io/kueue/pkg/controller/jobs/jobset"
	"sigs.k8s.io/kueue/pkg/controller/jobs/pod"
	"sigs.k8s.io/kueue/pkg/util/priority"
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
manifest's, else the kubeconfig's.

The job is completed as Kueue completes the Workload of a submitted job, with
Kueue's own code and your credentials: its priority as Kueue's job integrations
resolve it (a kueue.x-k8s.io/priority-class label names a
WorkloadPriorityClass, else the pods' priorityClassName a PriorityClass, else
the cluster's global default PriorityClass, else 0; --priority overrides it),
and its requests as Kueue counts them against quota (the RuntimeClass's pod
overhead, the namespace's LimitRange defaults, a limit standing for a missing
request). A class it names that cannot be read is an error; a default or a
LimitRange or RuntimeClass that your credentials cannot read is a warning on
standard error, and the answer goes on without it.`,
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
			if !cmd.Flags().Changed("priority") {
				f.priority = nil
			}
			return run(cmd.Context(), f, format, in, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&f.file, "filename", "f", "", "the manifest `FILE` (- for standard input); the first object in it")
	fs.StringVar(&f.localQueue, "local-queue", "", "the LocalQueue `NAME` (default: the manifest's queue-name label)")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "the `NAMESPACE` (default: the manifest's, else the kubeconfig's)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "the kubeconfig `FILE` (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	f.priority = new(int32)
	fs.Int32Var(f.priority, "priority", 0, "the priority `VALUE`, instead of the one the manifest's priority class gives")
	cli.AddOutputFlag(cmd, &f.output)
	return cmd
}

type flags struct {
	file, localQueue, namespace, kubeconfig, output string
	// priority is nil unless --priority was given.
	priority *int32
}

// question is what a manifest asks.
type question struct {
	namespace  string
	localQueue kueue.LocalQueueName
	// job is the manifest's object, for Kueue's priority resolution; nil
	// for a Workload, whose priority is its own.
	job client.Object
	// priorityClassRef is the Workload's reference, when it has no priority
	// value.
	priorityClassRef *kueue.PriorityClassRef
	priority         *int32
	maxExec          *int32
	podSets          []kueue.PodSet
}

func run(ctx context.Context, f flags, format cli.Format, in io.Reader, out, errOut io.Writer) error {
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
	restConfig, namespace, err := cli.RESTConfig(f.kubeconfig, cmp.Or(f.namespace, q.namespace))
	if err != nil {
		return err
	}
	clientset, err := kueueclientset.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	if f.priority != nil {
		q.priority = f.priority
	}
	reader, err := newReader(restConfig)
	if err != nil {
		return err
	}
	warn := func(msg string) { fmt.Fprintln(errOut, "warning:", msg) }
	if err := q.completeAsKueue(ctx, reader, namespace, warn); err != nil {
		return err
	}
	review, err := reviewOf(q)
	if err != nil {
		return err
	}
	got, err := clientset.VisibilityV1beta2().WaitTimeReviews(namespace).Create(ctx, review, metav1.CreateOptions{})
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
	for _, add := range []func(*runtime.Scheme) error{batchv1.AddToScheme, corev1.AddToScheme, jobsetapi.AddToScheme, kueue.AddToScheme,
		schedulingv1.AddToScheme, nodev1.AddToScheme} {
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
		q = question{namespace: o.Namespace, localQueue: o.Spec.QueueName, priority: o.Spec.Priority, maxExec: o.Spec.MaximumExecutionTimeSeconds,
			podSets: o.Spec.PodSets, priorityClassRef: o.Spec.PriorityClassRef}
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
	q.job = obj.(client.Object)
	q.maxExec = jobframework.MaximumExecutionTimeSecondsForObject(meta)
	return q, nil
}

// completeAsKueue completes q as Kueue completes the Workload of a
// submitted job, with Kueue's own code and c's credentials:
//
//   - the priority, unless q has one: a job's as Kueue's job integrations
//     resolve it (jobframework.ExtractPriority: the WorkloadPriorityClass
//     its label names, else the PriorityClass its pods name, else the
//     global default PriorityClass, else 0), a Workload's from its
//     priorityClassRef;
//   - the pod sets' requests as Kueue's queue manager counts them
//     (workload.AdjustResources: the RuntimeClass's pod overhead, the
//     namespace's LimitRange defaults, a limit standing for a missing
//     request).
//
// A class that q names and that cannot be read is an error, for a priority
// taken as 0 could put the answer anywhere in the queue. The global default
// that cannot be read (a user may not list PriorityClasses) gives
// priority 0, and a LimitRange or RuntimeClass that cannot be read is left
// out, each with a warning.
func (q *question) completeAsKueue(ctx context.Context, c client.Client, namespace string, warn func(string)) error {
	if q.priority == nil {
		named, err := q.resolvePriority(ctx, c)
		if err != nil {
			if named != "" {
				return fmt.Errorf("priority class %s: %w (give --priority to skip it)", named, err)
			}
			warn(fmt.Sprintf("priority taken as %d: the cluster's default PriorityClass cannot be read: %v", kueueconstants.DefaultPriority, err))
			q.priority = ptr.To(kueueconstants.DefaultPriority)
		}
	}
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: namespace}, Spec: kueue.WorkloadSpec{PodSets: q.podSets}}
	workload.AdjustResources(ctrl.LoggerInto(ctx, logr.New(warningSink{warn: warn})), c, wl)
	q.podSets = wl.Spec.PodSets
	return nil
}

// resolvePriority sets q.priority from its classes; named is the class it
// names ("" when only the default was looked for).
func (q *question) resolvePriority(ctx context.Context, c client.Client) (named string, err error) {
	var value int32
	switch ref := q.priorityClassRef; {
	case q.job != nil:
		named = jobframework.WorkloadPriorityClassName(q.job)
		for i := 0; named == "" && i < len(q.podSets); i++ {
			named = q.podSets[i].Template.Spec.PriorityClassName
		}
		_, value, err = jobframework.ExtractPriority(ctx, c, q.job, q.podSets, nil)
	case ref != nil && ref.Kind == kueue.WorkloadPriorityClassKind:
		named = ref.Name
		_, value, err = priority.GetPriorityFromWorkloadPriorityClass(ctx, c, ref.Name)
	case ref != nil:
		named = ref.Name
		_, value, err = priority.GetPriorityFromPriorityClass(ctx, c, ref.Name)
	default:
		_, value, err = priority.GetPriorityFromPriorityClass(ctx, c, "")
	}
	if err == nil {
		q.priority = &value
	}
	return named, err
}

// newReader returns a client that reads the API server with config and
// answers Kueue's code as its manager's cache would: a list of LimitRanges
// by the cache's index indexer.LimitRangeHasContainerOrPodType, a field the
// API server does not know, lists the namespace's LimitRanges and keeps
// those the index function selects.
func newReader(config *rest.Config) (client.Client, error) {
	c, err := client.NewWithWatch(config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	return interceptor.NewClient(c, interceptor.Funcs{List: listByKueueIndex}), nil
}

func listByKueueIndex(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
	ranges, ok := list.(*corev1.LimitRangeList)
	o := (&client.ListOptions{}).ApplyOptions(opts)
	if !ok || o.FieldSelector == nil {
		return c.List(ctx, list, opts...)
	}
	want, indexed := o.FieldSelector.RequiresExactMatch(indexer.LimitRangeHasContainerOrPodType)
	if !indexed {
		return c.List(ctx, list, opts...)
	}
	if err := c.List(ctx, ranges, client.InNamespace(o.Namespace)); err != nil {
		return err
	}
	ranges.Items = slices.DeleteFunc(ranges.Items, func(r corev1.LimitRange) bool {
		return !slices.Contains(indexer.IndexLimitRangeHasContainerOrPodType(&r), want)
	})
	return nil
}

// warningSink is a logr sink that passes the errors Kueue's code logs on
// to warn, and drops the rest.
type warningSink struct{ warn func(string) }

func (warningSink) Init(logr.RuntimeInfo)                   {}
func (warningSink) Enabled(int) bool                        { return false }
func (warningSink) Info(int, string, ...any)                {}
func (s warningSink) WithValues(...any) logr.LogSink        { return s }
func (s warningSink) WithName(string) logr.LogSink          { return s }
func (s warningSink) Error(err error, msg string, _ ...any) { s.warn(fmt.Sprintf("%s: %v", msg, err)) }

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
