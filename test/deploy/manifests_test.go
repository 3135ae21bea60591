package deploy

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	configapiv1beta1 "sigs.k8s.io/kueue/apis/config/v1beta1"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/config"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/features"

	// The job integrations the Configuration names, as the manager links them.
	_ "sigs.k8s.io/kueue/pkg/controller/jobs"
)

var (
	managerDeployment = objectKey{Group: "apps", Kind: "Deployment", Namespace: "kueue-system", Name: "kueue-controller-manager"}
	managerConfigMap  = objectKey{Kind: "ConfigMap", Namespace: "kueue-system", Name: "kueue-manager-config"}
)

// configFileKey is the ConfigMap key the manager reads its Configuration from.
const configFileKey = "controller_manager_config.yaml"

// wantWaitTimeEstimation is the section config/manager_config.yaml sets, as
// decoded from YAML into untyped values.
var wantWaitTimeEstimation = map[string]any{
	"refreshPeriod":        "1s",
	"refreshCPUMillicores": float64(10),
	"statisticsHalfLife":   "30m",
	"minServiceSamples":    float64(10),
	"forecastSamples":      float64(48),
	"horizon":              "168h",
	"emaSmoothingFactor":   0.3,

	"multiKueueDispatcherTimeout": "10s",
	"multiKueueDispatcherRound":   "5m",
}

// patchedReviewerRole is patch 0042's ClusterRole letting batch users create
// WaitTimeReviews, in the patched tree's config/ (which `make patch` writes).
var patchedReviewerRole = filepath.Join(repoRoot, "_output", "kueue", "config", "components", "rbac", "wait_time_reviewer_role.yaml")

// TestOverlayChangesOnlyImageGateConfigurationAndReviewerRole compares the overlay's
// render with upstream's object by object: apart from the manager image,
// the two Configuration sections the overlay adds and patch 0042's
// ClusterRole (as upstream's config/default renders its roles: the kueue-
// name prefix and two labels), they must be identical.
func TestOverlayChangesOnlyImageGateConfigurationAndReviewerRole(t *testing.T) {
	upstream := indexObjects(t, upstreamManifests, readObjects(t, upstreamManifests))
	ours := indexObjects(t, renderedManifests, readObjects(t, renderedManifests))
	for _, k := range []objectKey{managerDeployment, managerConfigMap} {
		if upstream[k] == nil || ours[k] == nil {
			t.Fatalf("%s is missing from %s or %s", k, upstreamManifests, renderedManifests)
		}
	}

	// The configuration: upstream's, plus the gate and the estimator's section.
	upstreamConfig := configurationOf(t, upstream[managerConfigMap])
	ourConfig := configurationOf(t, ours[managerConfigMap])
	for _, key := range []string{"featureGates", "waitTimeEstimation"} {
		if _, set := upstreamConfig[key]; set {
			t.Errorf("upstream's Configuration already sets %s: the overlay would replace it", key)
		}
	}
	wantConfig := maps.Clone(upstreamConfig)
	wantConfig["featureGates"] = map[string]any{"WaitTimeEstimation": true}
	wantConfig["waitTimeEstimation"] = wantWaitTimeEstimation
	if diff := cmp.Diff(wantConfig, ourConfig); diff != "" {
		t.Errorf("the manager's Configuration differs from upstream's beyond the gate and waitTimeEstimation (-want +got):\n%s", diff)
	}

	// Everything: upstream's objects with the expected image and, once the
	// Configuration is checked above, our ConfigMap text.
	want := make(map[objectKey]*unstructured.Unstructured, len(upstream))
	for k, u := range upstream {
		want[k] = u.DeepCopy()
	}
	setManagerImage(t, want[managerDeployment], expectedImage())
	ourText := configurationText(t, ours[managerConfigMap])
	if err := unstructured.SetNestedField(want[managerConfigMap].Object, ourText, "data", configFileKey); err != nil {
		t.Fatal(err)
	}
	role := readObjects(t, patchedReviewerRole)
	if len(role) != 1 {
		t.Fatalf("%s: %d objects, want the ClusterRole", patchedReviewerRole, len(role))
	}
	role[0].SetName("kueue-" + role[0].GetName())
	labels := role[0].GetLabels()
	labels["app.kubernetes.io/name"] = "kueue"
	labels["control-plane"] = "controller-manager"
	role[0].SetLabels(labels)
	want[keyOf(role[0])] = role[0]
	if diff := cmp.Diff(want, ours); diff != "" {
		t.Errorf("the overlay changes more than the manager image, its Configuration and patch 0042's ClusterRole (-upstream with those changes +overlay):\n%s", diff)
	}
}

// TestManagerConfigurationLoadsInKueue decodes the rendered Configuration
// strictly, then loads and validates it the way the manager does at start-up
// (pkg/config Load, feature gates, Validate).
func TestManagerConfigurationLoadsInKueue(t *testing.T) {
	ours := indexObjects(t, renderedManifests, readObjects(t, renderedManifests))
	if ours[managerConfigMap] == nil {
		t.Fatalf("%s has no %s", renderedManifests, managerConfigMap)
	}
	text := configurationText(t, ours[managerConfigMap])

	want := &configapi.WaitTimeEstimation{
		RefreshPeriod:        &metav1.Duration{Duration: time.Second},
		RefreshCPUMillicores: ptr.To[int32](10),
		StatisticsHalfLife:   &metav1.Duration{Duration: 30 * time.Minute},
		MinServiceSamples:    ptr.To[int32](10),
		ForecastSamples:      ptr.To[int32](48),
		Horizon:              &metav1.Duration{Duration: 168 * time.Hour},
		EMASmoothingFactor:   ptr.To(0.3),

		MultiKueueDispatcherTimeout: &metav1.Duration{Duration: 10 * time.Second},
		MultiKueueDispatcherRound:   &metav1.Duration{Duration: 5 * time.Minute},
	}

	// As written: every field explicit, and equal to Kueue's defaults.
	var written configapi.Configuration
	if err := yaml.UnmarshalStrict([]byte(text), &written); err != nil {
		t.Fatalf("strict decoding of the rendered Configuration: %v", err)
	}
	if diff := cmp.Diff(want, written.WaitTimeEstimation); diff != "" {
		t.Errorf("waitTimeEstimation as written (-want +got):\n%s", diff)
	}
	defaults := &configapi.WaitTimeEstimation{}
	configapi.SetDefaults_WaitTimeEstimation(defaults)
	if diff := cmp.Diff(defaults, written.WaitTimeEstimation); diff != "" {
		t.Errorf("waitTimeEstimation is documented as Kueue's defaults but differs from them (-defaults +written):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"WaitTimeEstimation": true}, written.FeatureGates); diff != "" {
		t.Errorf("featureGates (-want +got):\n%s", diff)
	}

	// As the manager loads it.
	scheme := managerScheme(t)
	cfg := loadConfiguration(t, scheme, text)
	if errs := config.LoadAndValidateFeatureGates("", cfg.FeatureGates); len(errs) > 0 {
		t.Fatalf("feature gates: %v", errs.ToAggregate())
	}
	if !features.Enabled(features.WaitTimeEstimation) {
		t.Errorf("the %s gate is off after loading the Configuration", features.WaitTimeEstimation)
	}
	if errs := config.Validate(&cfg, scheme); len(errs) > 0 {
		t.Errorf("Kueue rejects the rendered Configuration: %v", errs.ToAggregate())
	}
	if diff := cmp.Diff(want, cfg.WaitTimeEstimation); diff != "" {
		t.Errorf("waitTimeEstimation as loaded (-want +got):\n%s", diff)
	}

	// The same path rejects a bad value and a misspelled field in the section,
	// so the acceptance above means something.
	bad := strings.Replace(text, "forecastSamples: 48", "forecastSamples: 0", 1)
	if bad == text {
		t.Fatal("the rendered Configuration has no `forecastSamples: 48` line")
	}
	badCfg := loadConfiguration(t, scheme, bad)
	if errs := config.Validate(&badCfg, scheme); len(errs) == 0 {
		t.Error("Validate accepted forecastSamples: 0")
	}
	misspelled := strings.Replace(text, "forecastSamples:", "forecastSample:", 1)
	path := filepath.Join(t.TempDir(), configFileKey)
	if err := os.WriteFile(path, []byte(misspelled), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := config.Load(scheme, path); err == nil || !strings.Contains(err.Error(), "forecastSample") {
		t.Errorf("Load of a misspelled waitTimeEstimation field: got error %v, want an unknown field error", err)
	}
}

// configurationText is the manager's Configuration file in the ConfigMap.
func configurationText(t *testing.T, cm *unstructured.Unstructured) string {
	t.Helper()
	text, found, err := unstructured.NestedString(cm.Object, "data", configFileKey)
	if err != nil || !found {
		t.Fatalf("%s has no data.%s (%v)", keyOf(cm), configFileKey, err)
	}
	return text
}

// configurationOf decodes the manager's Configuration into untyped values.
func configurationOf(t *testing.T, cm *unstructured.Unstructured) map[string]any {
	t.Helper()
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(configurationText(t, cm)), &cfg); err != nil {
		t.Fatalf("%s: decoding %s: %v", keyOf(cm), configFileKey, err)
	}
	return cfg
}

// setManagerImage sets the image of the Deployment's manager container.
func setManagerImage(t *testing.T, deployment *unstructured.Unstructured, image string) {
	t.Helper()
	containers, _, err := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	if err != nil {
		t.Fatal(err)
	}
	managers := 0
	for _, c := range containers {
		if container, ok := c.(map[string]any); ok && container["name"] == "manager" {
			container["image"] = image
			managers++
		}
	}
	if managers != 1 {
		t.Fatalf("%s has %d containers named manager, want 1", keyOf(deployment), managers)
	}
	if err := unstructured.SetNestedSlice(deployment.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
}

// managerScheme is the scheme cmd/kueue builds: what config.Load decodes
// with and config.Validate checks the integrations against.
func managerScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, kueue.AddToScheme, configapiv1beta1.AddToScheme, configapi.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	err := jobframework.ForEachIntegration(func(_ string, cb jobframework.IntegrationCallbacks) error {
		if cb.AddToScheme != nil {
			return cb.AddToScheme(scheme)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return scheme
}

// loadConfiguration writes text to a file and loads it with config.Load.
func loadConfiguration(t *testing.T, scheme *runtime.Scheme, text string) configapi.Configuration {
	t.Helper()
	path := filepath.Join(t.TempDir(), configFileKey)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	_, cfg, err := config.Load(scheme, path)
	if err != nil {
		t.Fatalf("config.Load: %v", err)
	}
	return cfg
}
