package plan

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/webhooks"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
)

// scheme knows the Kueue API (v1beta2, and v1beta1 with its conversions to
// v1beta2).
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(kueue.AddToScheme(s))
	utilruntime.Must(kueuev1beta1.AddToScheme(s))
	return s
}()

// decoder decodes Kueue objects strictly: an unknown or duplicated field
// is an error, as with `kubectl apply --validate=strict`.
var decoder = serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()

// ignoredKinds are Kueue kinds that do not change quotas; plan accepts and
// skips them so that whole-namespace exports can be fed in.
var ignoredKinds = map[string]bool{
	"AdmissionCheck":            true,
	"LocalQueue":                true,
	"MultiKueueCluster":         true,
	"MultiKueueConfig":          true,
	"ProvisioningRequestConfig": true,
	"Topology":                  true,
	"Workload":                  true,
	"WorkloadPriorityClass":     true,
}

// inputs is everything read from the -f sources.
type inputs struct {
	flavors []*kueue.ResourceFlavor
	cohorts []*kueue.Cohort
	queues  []*kueue.ClusterQueue
	classes []Class
	// ignored counts skipped objects by kind.
	ignored map[string]int
}

// stdinSource is the -f value that reads standard input.
const stdinSource = "-"

// load reads every source (a file, a directory of *.yaml, *.yml and *.json
// files, or "-" for stdin) and validates what it finds. All errors are
// *cli.UsageError.
func load(sources []string, stdin io.Reader) (*inputs, error) {
	in := &inputs{ignored: map[string]int{}}
	stdinUsed := false
	for _, src := range sources {
		if src == stdinSource {
			if stdinUsed {
				return nil, cli.Usagef("-f - (stdin) can be given only once")
			}
			stdinUsed = true
			data, err := io.ReadAll(stdin)
			if err != nil {
				return nil, cli.Usagef("-f reading stdin: %v", err)
			}
			if err := in.addFile("stdin", data); err != nil {
				return nil, err
			}
			continue
		}
		files, err := expand(src)
		if err != nil {
			return nil, err
		}
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				return nil, cli.Usagef("-f %s: %v", name, pathErrorCause(err))
			}
			if err := in.addFile(name, data); err != nil {
				return nil, err
			}
		}
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	return in, nil
}

// expand lists the files of a source: itself, or a directory's manifest
// files in lexical order.
func expand(src string) ([]string, error) {
	info, err := os.Stat(src)
	if err != nil {
		return nil, cli.Usagef("-f %s: %v", src, pathErrorCause(err))
	}
	if !info.IsDir() {
		return []string{src}, nil
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return nil, cli.Usagef("-f %s: %v", src, pathErrorCause(err))
	}
	var files []string
	for _, e := range entries {
		switch filepath.Ext(e.Name()) {
		case ".yaml", ".yml", ".json":
			if !e.IsDir() {
				files = append(files, filepath.Join(src, e.Name()))
			}
		}
	}
	if len(files) == 0 {
		return nil, cli.Usagef("-f %s: no *.yaml, *.yml or *.json file in the directory", src)
	}
	return files, nil
}

func pathErrorCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// addFile splits a multi-document YAML (or JSON) file and adds each
// document.
func (in *inputs) addFile(name string, data []byte) error {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return cli.Usagef("%s: document %d: %v", name, doc, err)
		}
		if err := in.addDocument(raw, fmt.Sprintf("%s: document %d", name, doc)); err != nil {
			return err
		}
	}
}

// typeMeta is what every document must say about itself.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// addDocument decodes one YAML or JSON document; where names it in
// messages.
func (in *inputs) addDocument(raw []byte, where string) error {
	data, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return cli.Usagef("%s: %v", where, err)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return nil // an empty document, or only comments
	}
	if data[0] != '{' {
		return cli.Usagef("%s: want an object with apiVersion and kind", where)
	}
	var tm typeMeta
	if err := json.Unmarshal(data, &tm); err != nil {
		return cli.Usagef("%s: %v", where, err)
	}
	if tm.APIVersion == "" || tm.Kind == "" {
		return cli.Usagef("%s: apiVersion and kind are required", where)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return cli.Usagef("%s: %v", where, err)
	}
	switch {
	case tm.APIVersion == ClassesAPIVersion && tm.Kind == ClassesKind:
		classes, err := decodeClasses(data, where)
		if err != nil {
			return err
		}
		in.classes = append(in.classes, classes...)
		return nil
	case gv.Group == "" && tm.Kind == "List":
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return cli.Usagef("%s: List: %v", where, err)
		}
		for i, item := range list.Items {
			if err := in.addDocument(item, fmt.Sprintf("%s: items[%d]", where, i)); err != nil {
				return err
			}
		}
		return nil
	case gv.Group == kueue.SchemeGroupVersion.Group:
		return in.addKueueObject(data, gv.WithKind(tm.Kind), where)
	}
	return cli.Usagef("%s: unsupported kind %s (apiVersion %s): plan reads ResourceFlavor, Cohort and ClusterQueue (kueue.x-k8s.io), %s (%s) and List",
		where, tm.Kind, tm.APIVersion, ClassesKind, ClassesAPIVersion)
}

// addKueueObject decodes a kueue.x-k8s.io object, converting v1beta1 to
// v1beta2.
func (in *inputs) addKueueObject(data []byte, gvk schema.GroupVersionKind, where string) error {
	if ignoredKinds[gvk.Kind] {
		in.ignored[gvk.Kind]++
		return nil
	}
	if !scheme.Recognizes(gvk) {
		return cli.Usagef("%s: unsupported kind %s (apiVersion %s): plan reads ResourceFlavor, Cohort and ClusterQueue of kueue.x-k8s.io/v1beta2 or v1beta1",
			where, gvk.Kind, gvk.GroupVersion())
	}
	obj, _, err := decoder.Decode(data, nil, nil)
	if err != nil {
		return cli.Usagef("%s: %s: %v", where, gvk.Kind, err)
	}
	if gvk.GroupVersion() != kueue.SchemeGroupVersion {
		if obj, err = scheme.ConvertToVersion(obj, kueue.SchemeGroupVersion); err != nil {
			return cli.Usagef("%s: %s: converting to %s: %v", where, gvk.Kind, kueue.SchemeGroupVersion, err)
		}
	}
	switch o := obj.(type) {
	case *kueue.ResourceFlavor:
		if errs := webhooks.ValidateResourceFlavor(o); len(errs) > 0 {
			return cli.Usagef("%s: ResourceFlavor %s: %v", where, o.Name, errs.ToAggregate())
		}
		in.flavors = append(in.flavors, o)
	case *kueue.Cohort:
		if _, err := (&webhooks.CohortWebhook{}).ValidateCreate(context.Background(), o); err != nil {
			return cli.Usagef("%s: Cohort %s: %v", where, o.Name, err)
		}
		if err := checkFlavorResources(o.Spec.ResourceGroups); err != nil {
			return cli.Usagef("%s: Cohort %s: %v", where, o.Name, err)
		}
		in.cohorts = append(in.cohorts, o)
	case *kueue.ClusterQueue:
		if errs := webhooks.ValidateClusterQueue(o); len(errs) > 0 {
			return cli.Usagef("%s: ClusterQueue %s: %v", where, o.Name, errs.ToAggregate())
		}
		if err := checkFlavorResources(o.Spec.ResourceGroups); err != nil {
			return cli.Usagef("%s: ClusterQueue %s: %v", where, o.Name, err)
		}
		in.queues = append(in.queues, o)
	default:
		in.ignored[gvk.Kind]++
	}
	return nil
}

// checkFlavorResources enforces the rule the ClusterQueue and Cohort CRDs
// check with CEL (the webhooks assume it): every flavor lists exactly the
// covered resources, in order.
func checkFlavorResources(groups []kueue.ResourceGroup) error {
	for i, rg := range groups {
		for j, f := range rg.Flavors {
			if len(f.Resources) != len(rg.CoveredResources) {
				return fmt.Errorf("spec.resourceGroups[%d].flavors[%d] (%s): flavors must have the same number of resources as the coveredResources (%d, got %d)",
					i, j, f.Name, len(rg.CoveredResources), len(f.Resources))
			}
		}
	}
	return nil
}

// validate checks names and references across documents.
func (in *inputs) validate() error {
	if len(in.queues) == 0 {
		return cli.Usagef("no ClusterQueue in the input: give the cluster's manifests with -f")
	}
	if len(in.classes) == 0 {
		return cli.Usagef("no %s document in the input: give the workload classes with -f", ClassesKind)
	}
	for _, check := range []struct {
		kind  string
		names []string
	}{
		{"ResourceFlavor", namesOf(in.flavors, func(o *kueue.ResourceFlavor) string { return o.Name })},
		{"Cohort", namesOf(in.cohorts, func(o *kueue.Cohort) string { return o.Name })},
		{"ClusterQueue", namesOf(in.queues, func(o *kueue.ClusterQueue) string { return o.Name })},
		{"workload class", namesOf(in.classes, func(c Class) string { return c.Name })},
	} {
		seen := map[string]bool{}
		for _, n := range check.names {
			if n == "" {
				return cli.Usagef("a %s has no name (metadata.name)", check.kind)
			}
			if seen[n] {
				return cli.Usagef("%s %s is defined twice", check.kind, n)
			}
			seen[n] = true
		}
	}
	queues := namesOf(in.queues, func(o *kueue.ClusterQueue) string { return o.Name })
	for _, c := range in.classes {
		if !slices.Contains(queues, c.ClusterQueue) {
			sort.Strings(queues)
			return cli.Usagef("workload class %s: unknown ClusterQueue %q (the input defines %s)", c.Name, c.ClusterQueue, strings.Join(queues, ", "))
		}
	}
	return nil
}

func namesOf[T any](items []T, name func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = name(it)
	}
	return out
}
