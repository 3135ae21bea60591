package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// defaultImage is the image config/kustomization.yaml names; make passes
// IMAGE when it is another.
const defaultImage = "kueue-waittime/kueue:v0.19.2-waittime"

// repoRoot is the repository root: go test runs in test/deploy.
var repoRoot = filepath.Join("..", "..")

var (
	renderedManifests = filepath.Join(repoRoot, "_output", "manifests", "kueue-waittime.yaml")
	upstreamManifests = filepath.Join(repoRoot, "_output", "manifests", "upstream.yaml")
	imageTarball      = filepath.Join(repoRoot, "_output", "image", "kueue-waittime.tar")
	imageLayout       = filepath.Join(repoRoot, "_output", "image", "oci")
	imageDigest       = filepath.Join(repoRoot, "_output", "image", "digest")
	craneBinary       = filepath.Join(repoRoot, "bin", "tools", "crane-v0.20.6", "crane")
)

// expectedImage is the manager image the manifests and the tarball must name.
func expectedImage() string {
	if image := os.Getenv("IMAGE"); image != "" {
		return image
	}
	return defaultImage
}

// readOutput reads a file that `make manifests image` writes, failing the
// test with the remedy when it is missing.
func readOutput(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is missing: run `make test-deploy` (or `make manifests image` before go test)", path)
	}
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return data
}

// objectKey names an object: group/kind namespace/name.
type objectKey struct {
	Group, Kind, Namespace, Name string
}

func (k objectKey) String() string {
	return fmt.Sprintf("%s/%s %s/%s", k.Group, k.Kind, k.Namespace, k.Name)
}

func keyOf(u *unstructured.Unstructured) objectKey {
	gvk := u.GroupVersionKind()
	return objectKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// readObjects decodes a multi-document YAML file into objects, in order.
func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(readOutput(t, path))))
	var objects []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var content map[string]any
		if err := yaml.Unmarshal(doc, &content); err != nil {
			t.Fatalf("%s: document %d: %v", path, len(objects)+1, err)
		}
		if len(content) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: content}
		if u.GetKind() == "" || u.GetName() == "" {
			t.Fatalf("%s: document %d has no kind or name", path, len(objects)+1)
		}
		objects = append(objects, u)
	}
	if len(objects) == 0 {
		t.Fatalf("%s holds no objects", path)
	}
	return objects
}

// indexObjects maps objects by key, failing on duplicates.
func indexObjects(t *testing.T, path string, objects []*unstructured.Unstructured) map[objectKey]*unstructured.Unstructured {
	t.Helper()
	index := make(map[objectKey]*unstructured.Unstructured, len(objects))
	for _, u := range objects {
		k := keyOf(u)
		if _, dup := index[k]; dup {
			t.Fatalf("%s: %s appears twice", path, k)
		}
		index[k] = u
	}
	return index
}
