package cluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestLocalizeServices(t *testing.T) {
	targets := map[string]int64{"kueue-webhook-service": 40001, "kueue-visibility-server": 40002}
	cases := map[string]struct {
		in   map[string]any
		want map[string]any
	}{
		"a Service of kueue-system becomes ExternalName to localhost": {
			in: map[string]any{"kind": "Service", "metadata": map[string]any{"name": "kueue-webhook-service", "namespace": "kueue-system"},
				"spec": map[string]any{"selector": map[string]any{"control-plane": "controller-manager"}, "clusterIP": "10.0.0.1",
					"ports": []any{map[string]any{"port": int64(443), "targetPort": int64(9443)}}}},
			want: map[string]any{"kind": "Service", "metadata": map[string]any{"name": "kueue-webhook-service", "namespace": "kueue-system"},
				"spec": map[string]any{"type": "ExternalName", "externalName": "localhost",
					"ports": []any{map[string]any{"port": int64(443), "targetPort": int64(9443)}}}},
		},
		"a Service elsewhere is left alone": {
			in:   map[string]any{"kind": "Service", "metadata": map[string]any{"name": "other", "namespace": "default"}, "spec": map[string]any{"clusterIP": "10.0.0.2"}},
			want: map[string]any{"kind": "Service", "metadata": map[string]any{"name": "other", "namespace": "default"}, "spec": map[string]any{"clusterIP": "10.0.0.2"}},
		},
		"webhooks point at the manager's port": {
			in: map[string]any{"kind": "MutatingWebhookConfiguration", "webhooks": []any{
				map[string]any{"name": "a", "clientConfig": map[string]any{"service": map[string]any{"name": "kueue-webhook-service", "namespace": "kueue-system", "port": int64(443)}}},
				map[string]any{"name": "b", "clientConfig": map[string]any{"service": map[string]any{"name": "someone-else", "namespace": "other", "port": int64(443)}}},
			}},
			want: map[string]any{"kind": "MutatingWebhookConfiguration", "webhooks": []any{
				map[string]any{"name": "a", "clientConfig": map[string]any{"service": map[string]any{"name": "kueue-webhook-service", "namespace": "kueue-system", "port": int64(40001)}}},
				map[string]any{"name": "b", "clientConfig": map[string]any{"service": map[string]any{"name": "someone-else", "namespace": "other", "port": int64(443)}}},
			}},
		},
		"a CRD's conversion webhook too": {
			in: map[string]any{"kind": "CustomResourceDefinition", "spec": map[string]any{"conversion": map[string]any{"webhook": map[string]any{
				"clientConfig": map[string]any{"service": map[string]any{"name": "kueue-webhook-service", "namespace": "kueue-system", "port": int64(443)}}}}}},
			want: map[string]any{"kind": "CustomResourceDefinition", "spec": map[string]any{"conversion": map[string]any{"webhook": map[string]any{
				"clientConfig": map[string]any{"service": map[string]any{"name": "kueue-webhook-service", "namespace": "kueue-system", "port": int64(40001)}}}}}},
		},
		"a CRD without conversion is left alone": {
			in:   map[string]any{"kind": "CustomResourceDefinition", "spec": map[string]any{"group": "kueue.x-k8s.io"}},
			want: map[string]any{"kind": "CustomResourceDefinition", "spec": map[string]any{"group": "kueue.x-k8s.io"}},
		},
		"the APIService points at the visibility port": {
			in:   map[string]any{"kind": "APIService", "spec": map[string]any{"service": map[string]any{"name": "kueue-visibility-server", "namespace": "kueue-system", "port": int64(443)}}},
			want: map[string]any{"kind": "APIService", "spec": map[string]any{"service": map[string]any{"name": "kueue-visibility-server", "namespace": "kueue-system", "port": int64(40002)}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: tc.in}
			if err := localizeServices(u, targets); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, u.Object); diff != "" {
				t.Errorf("localizeServices (-want +got):\n%s", diff)
			}
		})
	}
}

func TestManagerPortFor(t *testing.T) {
	m := &Manager{HealthPort: 1, MetricsPort: 2, WebhookPort: 3, VisibilityPort: 4}
	for target, want := range map[string]int64{"9443": 3, "webhook-server": 3, "8443": 2, "https": 2, "8082": 4, "visibility": 4} {
		if got, ok := m.portFor(intOrString(target)); !ok || got != want {
			t.Errorf("portFor(%s) = %d, %v; want %d", target, got, ok, want)
		}
	}
	if _, ok := m.portFor(intOrString("8081")); ok {
		t.Error("portFor(8081): the health port is no Service's target")
	}
}

// writeLayout writes an OCI image layout with one image whose layers hold
// the given files (name → content), each layer gzip-compressed.
func writeLayout(t *testing.T, layers ...map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	blobs := filepath.Join(dir, "blobs", "sha256")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		t.Fatal(err)
	}
	put := func(data []byte) string {
		sum := sha256.Sum256(data)
		digest := hex.EncodeToString(sum[:])
		if err := os.WriteFile(filepath.Join(blobs, digest), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return "sha256:" + digest
	}
	var layerDescs []map[string]string
	for _, files := range layers {
		var tarBuf bytes.Buffer
		tw := tar.NewWriter(&tarBuf)
		for name, content := range files {
			if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write([]byte(content)); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		if _, err := zw.Write(tarBuf.Bytes()); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		layerDescs = append(layerDescs, map[string]string{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": put(gz.Bytes())})
	}
	manifest, err := json.Marshal(map[string]any{"schemaVersion": 2, "layers": layerDescs})
	if err != nil {
		t.Fatal(err)
	}
	index, err := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []map[string]string{
		{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": put(manifest)}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), index, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestExtractFile(t *testing.T) {
	cases := map[string]struct {
		layers  []map[string]string
		want    string
		wantErr string
	}{
		"the file of the one layer": {
			layers: []map[string]string{{"manager": "v1", "etc/passwd": "root"}},
			want:   "v1",
		},
		"a later layer's copy wins": {
			layers: []map[string]string{{"manager": "v1"}, {"manager": "v2"}},
			want:   "v2",
		},
		"missing": {
			layers:  []map[string]string{{"etc/passwd": "root"}},
			wantErr: "has no /manager",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "bin", "manager")
			err := extractFile(writeLayout(t, tc.layers...), "/manager", dest)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("extractFile: %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(dest)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("extracted %q, want %q", got, tc.want)
			}
			st, err := os.Stat(dest)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm()&0o100 == 0 {
				t.Errorf("extracted with mode %v, want executable", st.Mode())
			}
		})
	}
}

func TestLastErrorLine(t *testing.T) {
	cases := map[string]struct{ log, want string }{
		"the last JSON error": {
			log:  `{"level":"info","msg":"a"}` + "\n" + `{"level":"error","msg":"first"}` + "\n" + `{"level":"error","msg":"second"}` + "\n" + `{"level":"info","msg":"b"}`,
			want: `{"level":"error","msg":"second"}`,
		},
		"a klog error": {
			log:  "I1124 start\nE1124 leaderelection.go:461] lost\nI1124 stop",
			want: "E1124 leaderelection.go:461] lost",
		},
		"no error: the last line": {
			log:  "I1124 a\nI1124 b\n",
			want: "I1124 b",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := lastErrorLine(tc.log); got != tc.want {
				t.Errorf("lastErrorLine = %q, want %q", got, tc.want)
			}
		})
	}
}

func intOrString(s string) intstr.IntOrString { return intstr.Parse(s) }
