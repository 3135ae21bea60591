package helmchart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

const (
	release   = "custom-kueue-name"
	namespace = "kueue-system"
)

// kueueDir is the patched Kueue tree: $KUEUE_DIR, or _output/kueue of this
// repository (make patch).
func kueueDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUEUE_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "_output", "kueue")
	}
	if _, err := os.Stat(filepath.Join(dir, "charts", "kueue", "Chart.yaml")); err != nil {
		t.Fatalf("No patched Kueue chart in %s (make patch, or set KUEUE_DIR): %v", dir, err)
	}
	return dir
}

// renderChart renders the chart with its default values as Helm installs
// release into namespace, and returns the manifests by template path
// (kueue/templates/...).
func renderChart(t *testing.T, dir string) map[string]string {
	t.Helper()
	chart, err := loader.Load(filepath.Join(dir, "charts", "kueue"))
	if err != nil {
		t.Fatalf("Loading the chart: %v", err)
	}
	values, err := chartutil.ToRenderValues(chart, map[string]any{},
		chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatalf("Building the render values: %v", err)
	}
	out, err := engine.Render(chart, values)
	if err != nil {
		t.Fatalf("Rendering the chart: %v", err)
	}
	return out
}

// role is what both sources say of an RBAC role.
type role struct {
	Kind     string              `json:"kind"`
	Metadata roleMeta            `json:"metadata"`
	Rules    []rbacv1.PolicyRule `json:"rules"`
}

type roleMeta struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
}

func parseRole(t *testing.T, what string, data []byte) role {
	t.Helper()
	var r role
	if err := yaml.Unmarshal(data, &r); err != nil {
		t.Fatalf("Parsing %s: %v", what, err)
	}
	return r
}

// TestChartRBACMatchesKustomizeRBAC renders the chart and compares every
// RBAC file of config/components/rbac with the chart template of the same
// name (yaml-processor generates one from the other): same kind, the name
// prefixed with the release, the same labels among the chart's own, and,
// unless a rule names resources (which the chart prefixes with the
// release), the same rules.
func TestChartRBACMatchesKustomizeRBAC(t *testing.T) {
	dir := kueueDir(t)
	rendered := renderChart(t, dir)
	files, err := filepath.Glob(filepath.Join(dir, "config", "components", "rbac", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, file := range files {
		base := filepath.Base(file)
		if base == "kustomization.yaml" {
			continue
		}
		t.Run(strings.TrimSuffix(base, ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want := parseRole(t, file, data)
			manifest, ok := rendered["kueue/templates/rbac/"+base]
			if !ok {
				t.Fatalf("The chart has no template rbac/%s (make update-helm in the Kueue tree)", base)
			}
			got := parseRole(t, "rbac/"+base, []byte(manifest))
			if got.Kind != want.Kind {
				t.Errorf("Kind %q, want %q", got.Kind, want.Kind)
			}
			if wantName := release + "-" + want.Metadata.Name; got.Metadata.Name != wantName {
				t.Errorf("Name %q, want %q", got.Metadata.Name, wantName)
			}
			for k, v := range want.Metadata.Labels {
				if got.Metadata.Labels[k] != v {
					t.Errorf("Label %s=%q, want %q", k, got.Metadata.Labels[k], v)
				}
			}
			for _, r := range want.Rules {
				if len(r.ResourceNames) > 0 {
					return
				}
			}
			if diff := cmp.Diff(want.Rules, got.Rules); diff != "" {
				t.Errorf("Rules (-kustomize +chart):\n%s", diff)
			}
		})
		compared++
	}
	if compared == 0 {
		t.Fatalf("No RBAC file in %s", filepath.Join(dir, "config", "components", "rbac"))
	}
}

// TestChartGrantsWaitTimeReviews checks the wait-time reviewer role as a
// Helm release installs it: batch users, and the view, edit and admin
// roles, may create WaitTimeReviews and get the dispatched workloads of a
// LocalQueue.
func TestChartGrantsWaitTimeReviews(t *testing.T) {
	rendered := renderChart(t, kueueDir(t))
	manifest, ok := rendered["kueue/templates/rbac/wait_time_reviewer_role.yaml"]
	if !ok {
		t.Fatal("The chart has no wait-time reviewer role")
	}
	got := parseRole(t, "the wait-time reviewer role", []byte(manifest))
	want := role{
		Kind: "ClusterRole",
		Metadata: roleMeta{Name: release + "-wait-time-reviewer-role", Labels: map[string]string{
			"rbac.kueue.x-k8s.io/role":                     "wait-time-reviewer",
			"rbac.kueue.x-k8s.io/batch-admin":              "true",
			"rbac.kueue.x-k8s.io/batch-user":               "true",
			"rbac.authorization.k8s.io/aggregate-to-view":  "true",
			"rbac.authorization.k8s.io/aggregate-to-admin": "true",
			"rbac.authorization.k8s.io/aggregate-to-edit":  "true",
		}},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"visibility.kueue.x-k8s.io"}, Resources: []string{"waittimereviews"}, Verbs: []string{"create"}},
			{APIGroups: []string{"visibility.kueue.x-k8s.io"}, Resources: []string{"localqueues/dispatchedworkloads"}, Verbs: []string{"get"}},
		},
	}
	for k := range got.Metadata.Labels {
		if _, ok := want.Metadata.Labels[k]; !ok {
			delete(got.Metadata.Labels, k) // the chart's own labels (kueue.labels)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("The wait-time reviewer role (-want +got):\n%s", diff)
	}
}
