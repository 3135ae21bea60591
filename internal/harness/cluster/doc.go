// Package cluster runs a local Kubernetes cluster built from Go modules and
// deploys the patched Kueue on it the way its manifests say.
//
// The cluster is kube-apiserver and etcd (envtest, with the aggregation
// layer), kube-controller-manager (Job, garbage-collector, namespace,
// service-account, pod-GC, TTL and ClusterRole-aggregation controllers) and
// kube-scheduler, all v1.36.0 built into bin/k8s/, and KWOK
// (bin/tools/kwok-v0.8.0) simulating the nodes and the lifecycle of the pods
// bound to them: a pod runs for the duration its annotation
// RunDurationAnnotation asks, then Succeeds.
//
// DeployKueue applies the rendered manifests (make manifests) and runs the
// manager binary taken out of the image (make image) as processes, with the
// manifests' arguments and Configuration, authenticated with a token of the
// manifests' ServiceAccount, so that its RBAC is what the manager gets.
// What a pod would get from its own network namespace and the kubelet, the
// cluster supplies (see Manager).
//
// `make cluster` keeps one running until Ctrl-C; the end-to-end suite
// (test/e2e, make e2e) runs on one.
package cluster
