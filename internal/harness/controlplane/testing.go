package controlplane

import (
	"os"
	"testing"
)

// StartForTest starts a control plane with default Options for a test and
// stops it when the test ends. It fails the test at once, saying how to run
// it, when PROJECT_DIR or KUBEBUILDER_ASSETS is unset (make test sets both).
func StartForTest(t testing.TB) *ControlPlane {
	t.Helper()
	if os.Getenv("PROJECT_DIR") == "" || os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("PROJECT_DIR and KUBEBUILDER_ASSETS must point at the patched Kueue tree and the control-plane binaries (run through make test)")
	}
	cp, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	return cp
}
