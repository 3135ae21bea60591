// Package helmchart checks the patched Kueue Helm chart by rendering it with
// Helm's own template engine (helm.sh/helm/v3), since Kueue's chart tests
// need the helm-unittest plugin, which cannot be installed here: a release
// installed with Helm must grant what the kustomize manifests grant.
package helmchart
