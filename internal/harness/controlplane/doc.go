// Package controlplane runs a local Kubernetes control plane with the
// patched Kueue in process: a real kube-apiserver and etcd (envtest, built
// from Go modules into bin/), Kueue's CRDs and webhooks, Kueue's
// controllers and scheduler with the wait time estimator, and Kueue's
// visibility server registered with the kube-apiserver's aggregation layer,
// so the visibility API is reached the way users reach it:
// GET /apis/visibility.kueue.x-k8s.io/... through the kube-apiserver, with
// delegated authentication and RBAC.
//
// The manager is wired as cmd/kueue/main.go wires it, for the parts these
// tests use; with the KueueDRAIntegration gate on (its default) and
// Options.DeviceClassMappings, Kueue counts the devices that workloads claim
// through ResourceClaimTemplates as the mapped logical resources.
//
// The integration suites, the evaluation harness (kueue-waittime eval) and
// the demo all run on it. It builds only in this module's workspace with the
// patched Kueue tree (make patch).
package controlplane
