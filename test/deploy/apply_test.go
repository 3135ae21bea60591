package deploy

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const fieldOwner = client.FieldOwner("kueue-waittime-deploy-test")

// TestManifestsApplyOnAPIServer applies the rendered manifests to a real
// kube-apiserver and etcd the way `kubectl apply --server-side` would: the
// CustomResourceDefinitions for real (and waits until they are Established),
// then the namespace for real, then every other object with dry run (all
// admission and validation, nothing stored). Every object must be accepted.
//
// No object here is intercepted by a webhook: the only webhooks in play are
// Kueue's own, and their configurations are dry-run too, so the API server
// never calls them (they would fail with no manager serving them). The CRDs'
// conversion webhooks run only when a Kueue object is converted between
// versions, and this test creates no Kueue object.
func TestManifestsApplyOnAPIServer(t *testing.T) {
	objects := readObjects(t, renderedManifests)
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test-deploy` (it builds kube-apiserver and etcd into bin/k8s/)")
	}
	for _, binary := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, binary)); err != nil {
			t.Fatalf("KUBEBUILDER_ASSETS=%s has no %s: run `make envtest`", assets, binary)
		}
	}

	env := &envtest.Environment{BinaryAssetsDirectory: assets, ControlPlaneStopTimeout: 90 * time.Second}
	restConfig, err := env.Start()
	if err != nil {
		t.Fatalf("starting kube-apiserver and etcd: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping kube-apiserver and etcd: %v", err)
		}
	})
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	var crds, namespaces, others []*unstructured.Unstructured
	for _, u := range objects {
		switch keyOf(u).Group + "/" + keyOf(u).Kind {
		case "apiextensions.k8s.io/CustomResourceDefinition":
			crds = append(crds, u)
		case "/Namespace":
			namespaces = append(namespaces, u)
		default:
			others = append(others, u)
		}
	}
	if len(crds) == 0 || len(namespaces) == 0 {
		t.Fatalf("%s has %d CRDs and %d namespaces, want some of each", renderedManifests, len(crds), len(namespaces))
	}

	apply := func(u *unstructured.Unstructured, opts ...client.ApplyOption) error {
		opts = append([]client.ApplyOption{fieldOwner, client.ForceOwnership}, opts...)
		return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), opts...)
	}

	for _, crd := range crds {
		if err := apply(crd); err != nil {
			t.Fatalf("applying %s: %v", keyOf(crd), err)
		}
	}
	for _, crd := range crds {
		waitEstablished(ctx, t, c, crd.GetName())
	}
	for _, ns := range namespaces {
		if err := apply(ns); err != nil {
			t.Fatalf("applying %s: %v", keyOf(ns), err)
		}
	}
	// Kueue binds a Role in kube-system, which kube-apiserver creates itself
	// shortly after it starts.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Name: "kube-system"}, &corev1.Namespace{})
		return err == nil, client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatalf("waiting for namespace kube-system: %v", err)
	}

	kinds, accepted := map[string]int{}, 0
	for _, u := range others {
		if err := apply(u, client.DryRunAll); err != nil {
			t.Errorf("the API server rejects %s: %v", keyOf(u), err)
			continue
		}
		kinds[keyOf(u).Kind]++
		accepted++
	}
	for _, kind := range []string{"Deployment", "ConfigMap", "Service", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
		"Role", "RoleBinding", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "APIService", "Secret"} {
		if kinds[kind] == 0 {
			t.Errorf("no %s was accepted: the render lacks one or the API server rejected it", kind)
		}
	}
	t.Logf("created %d CRDs and %d namespaces; %d of %d other objects accepted with dry run: %v", len(crds), len(namespaces), accepted, len(others), kinds)

	// Dry run stored nothing.
	deployment := &unstructured.Unstructured{}
	deployment.SetAPIVersion("apps/v1")
	deployment.SetKind("Deployment")
	err = c.Get(ctx, client.ObjectKey{Namespace: managerDeployment.Namespace, Name: managerDeployment.Name}, deployment)
	if !apierrors.IsNotFound(err) {
		t.Errorf("after a dry run, getting %s: got %v, want NotFound", managerDeployment, err)
	}
}

// waitEstablished waits until the API server serves the CRD's resource.
func waitEstablished(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			return false, err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s is not Established: %v (conditions %v)", name, err, crd.Status.Conditions)
	}
}
