package cluster

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/controlplane"
)

// stages is the KWOK configuration: the lifecycle of nodes and pods.
//
//go:embed stages.yaml
var stages []byte

// RunDurationAnnotation on a pod of a Job is how long KWOK keeps it Running
// before it Succeeds (a Go duration, such as "90s"); without it, 10s. Put
// it in the Job's pod template. The name is KWOK's own.
const RunDurationAnnotation = "pod-complete.stage.kwok.x-k8s.io/delay"

// kwokNodeAnnotation marks the nodes KWOK manages.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// GPUResource is the extended resource the GPU nodes have.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// DRA devices: nodes with DRAGPUs publish that many devices of DRADriver
// in a ResourceSlice, and the DeviceClass DRADeviceClass selects them.
// kube-scheduler allocates them to ResourceClaims (made by
// kube-controller-manager from a pod's ResourceClaimTemplates); KWOK, with
// no kubelet plugin to prepare them, runs the pod.
const (
	DRADriver      = "gpu.example.com"
	DRADeviceClass = "gpu.example.com"
)

// Node is a simulated node: its allocatable CPU, memory and GPUs.
type Node struct {
	Name   string
	CPU    string // a quantity, such as "8"
	Memory string // a quantity, such as "32Gi"
	GPUs   int    // the GPUResource extended resource
	// DRAGPUs is how many DRA devices of DRADriver the node publishes.
	DRAGPUs int
	// Labels are added to the node's (kubernetes.io/hostname and
	// type=kwok are always set).
	Labels map[string]string
}

// The topology labels of the GPU nodes, for topology-aware scheduling: one
// block, and each GPU node a rack of its own.
const (
	TopologyBlockLabel = "kueue-waittime.x-k8s.io/block"
	TopologyRackLabel  = "kueue-waittime.x-k8s.io/rack"
)

// defaultNodes are the nodes of `make cluster`: four CPU nodes, two with
// four GPUs each as an extended resource (in one block, a rack each), and
// two with four GPUs each as DRA devices.
func defaultNodes() []Node {
	nodes := make([]Node, 0, 8)
	for i := range 4 {
		nodes = append(nodes, Node{Name: fmt.Sprintf("kwok-cpu-%d", i), CPU: "8", Memory: "32Gi"})
	}
	for i := range 2 {
		nodes = append(nodes, Node{Name: fmt.Sprintf("kwok-gpu-%d", i), CPU: "16", Memory: "64Gi", GPUs: 4,
			Labels: map[string]string{
				"kueue-waittime.x-k8s.io/accelerator": "gpu",
				TopologyBlockLabel:                    "b0",
				TopologyRackLabel:                     fmt.Sprintf("r%d", i),
			}})
	}
	for i := range 2 {
		nodes = append(nodes, Node{Name: fmt.Sprintf("kwok-dra-%d", i), CPU: "16", Memory: "64Gi", DRAGPUs: 4})
	}
	return nodes
}

// Options configure a [Cluster].
type Options struct {
	// Dir holds the kubeconfigs, the components' configuration and logs
	// (logs/<component>.log). Created if missing; a temporary directory,
	// removed by Stop, when empty.
	Dir string
	// AssetsDir holds kube-apiserver, etcd, kube-controller-manager and
	// kube-scheduler. Default: $KUBEBUILDER_ASSETS.
	AssetsDir string
	// Kwok is the kwok binary. Default: $KWOK.
	Kwok string
	// Nodes to create. Default: defaultNodes.
	Nodes []Node
}

// Cluster is a running local cluster: kube-apiserver and etcd (envtest),
// kube-controller-manager (the Job, garbage-collector, namespace,
// service-account and ClusterRole-aggregation controllers, among others),
// kube-scheduler, and KWOK simulating the nodes and the pods bound to them.
type Cluster struct {
	*controlplane.ControlPlane
	// Dir is Options.Dir.
	Dir string
	// AdminKubeconfig is an administrator's kubeconfig in Dir.
	AdminKubeconfig string

	opts       Options
	removeDir  bool
	components []*process // in start order
	managers   []*Manager
	deployed   *deployment
}

// Start runs the cluster and returns once its nodes are Ready.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.AssetsDir == "" {
		opts.AssetsDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if opts.Kwok == "" {
		opts.Kwok = os.Getenv("KWOK")
	}
	if opts.Nodes == nil {
		opts.Nodes = defaultNodes()
	}
	for _, need := range []struct{ path, hint string }{
		{filepath.Join(opts.AssetsDir, "kube-apiserver"), "make envtest"},
		{filepath.Join(opts.AssetsDir, "kube-controller-manager"), "make cluster-tools"},
		{filepath.Join(opts.AssetsDir, "kube-scheduler"), "make cluster-tools"},
		{opts.Kwok, "make cluster-tools (and set KWOK)"},
	} {
		if opts.AssetsDir == "" || need.path == "" {
			return nil, fmt.Errorf("cluster: set KUBEBUILDER_ASSETS and KWOK (%s builds them)", need.hint)
		}
		if _, err := os.Stat(need.path); err != nil {
			return nil, fmt.Errorf("cluster: %s is missing: %s builds it", need.path, need.hint)
		}
	}
	c := &Cluster{opts: opts, Dir: opts.Dir}
	if c.Dir == "" {
		dir, err := os.MkdirTemp("", "kueue-waittime-cluster-")
		if err != nil {
			return nil, err
		}
		c.Dir, c.removeDir = dir, true
	} else if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, err
	}
	cp, err := controlplane.Start(controlplane.Options{AssetsDir: opts.AssetsDir, WithoutKueue: true})
	if err != nil {
		return nil, errors.Join(err, c.removeOwnDir())
	}
	c.ControlPlane = cp
	if err := c.startComponents(ctx); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

func (c *Cluster) removeOwnDir() error {
	if c.removeDir {
		return os.RemoveAll(c.Dir)
	}
	return nil
}

func (c *Cluster) startComponents(ctx context.Context) error {
	kubeconfig, err := os.ReadFile(c.ControlPlane.Kubeconfig)
	if err != nil {
		return err
	}
	c.AdminKubeconfig = filepath.Join(c.Dir, "kubeconfig")
	if err := os.WriteFile(c.AdminKubeconfig, kubeconfig, 0o600); err != nil {
		return err
	}
	kcmPort, err := controlplane.FreePort()
	if err != nil {
		return err
	}
	schedulerPort, err := controlplane.FreePort()
	if err != nil {
		return err
	}
	kwokPort, err := controlplane.FreePort()
	if err != nil {
		return err
	}
	stagesPath := filepath.Join(c.Dir, "kwok-stages.yaml")
	if err := os.WriteFile(stagesPath, stages, 0o644); err != nil {
		return err
	}
	delegated := []string{
		"--kubeconfig=" + c.AdminKubeconfig,
		"--authentication-kubeconfig=" + c.AdminKubeconfig,
		"--authorization-kubeconfig=" + c.AdminKubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
	}
	specs := []struct {
		name   string
		binary string
		args   []string
	}{
		{"kube-controller-manager", filepath.Join(c.opts.AssetsDir, "kube-controller-manager"), append(delegated,
			"--secure-port="+strconv.Itoa(kcmPort),
			"--cert-dir="+filepath.Join(c.Dir, "kube-controller-manager"),
			// What Jobs need: the Job controller, the garbage collector that
			// removes a deleted Job's pods, namespace deletion, the default
			// ServiceAccount, pod garbage collection; the aggregation of
			// ClusterRoles, which Kueue's user-facing roles rely on; and the
			// ResourceClaims of pods' ResourceClaimTemplates (DRA). No
			// node lifecycle: KWOK's nodes have no kubelet to heartbeat.
			"--controllers=job-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,"+
				"pod-garbage-collector-controller,ttl-after-finished-controller,clusterrole-aggregation-controller,resourceclaim-controller",
			"--kube-api-qps=200", "--kube-api-burst=400",
		)},
		{"kube-scheduler", filepath.Join(c.opts.AssetsDir, "kube-scheduler"), append(delegated,
			"--secure-port="+strconv.Itoa(schedulerPort),
			"--cert-dir="+filepath.Join(c.Dir, "kube-scheduler"),
		)},
		{"kwok", c.opts.Kwok, []string{
			"--kubeconfig=" + c.AdminKubeconfig,
			"--config=" + stagesPath,
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
			"--server-address=127.0.0.1:" + strconv.Itoa(kwokPort),
			// Room for a million pod IPs: a finished Job's pods keep theirs.
			"--cidr=10.64.0.1/10",
			"--node-ip=10.0.0.1",
		}},
	}
	for _, s := range specs {
		p, err := startProcess(c.Dir, s.name, "", nil, s.binary, s.args...)
		if err != nil {
			return err
		}
		c.components = append(c.components, p)
	}
	if err := c.createNodes(ctx, c.opts.Nodes...); err != nil {
		return err
	}
	return c.waitNodesReady(ctx, 2*time.Minute)
}

// createNodes creates simulated nodes for KWOK to run, with the
// ResourceSlices of their DRA devices (and the DeviceClass, once).
func (c *Cluster) createNodes(ctx context.Context, nodes ...Node) error {
	for _, n := range nodes {
		node, err := n.object()
		if err != nil {
			return err
		}
		if err := c.Client.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("cluster: creating node %s: %w", n.Name, err)
		}
		if n.DRAGPUs == 0 {
			continue
		}
		class := &resourcev1.DeviceClass{
			ObjectMeta: metav1.ObjectMeta{Name: DRADeviceClass},
			Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
				CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", DRADriver)},
			}}},
		}
		if err := c.Client.Create(ctx, class); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("cluster: creating DeviceClass %s: %w", DRADeviceClass, err)
		}
		if err := c.Client.Create(ctx, n.resourceSlice()); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("cluster: creating the ResourceSlice of node %s: %w", n.Name, err)
		}
	}
	return nil
}

// resourceSlice publishes the node's DRA devices, one pool per node.
func (n Node) resourceSlice() *resourcev1.ResourceSlice {
	devices := make([]resourcev1.Device, n.DRAGPUs)
	for i := range devices {
		devices[i] = resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i)}
	}
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name + "-" + strings.ReplaceAll(DRADriver, ".", "-")},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   DRADriver,
			NodeName: &n.Name,
			Pool:     resourcev1.ResourcePool{Name: n.Name, Generation: 1, ResourceSliceCount: 1},
			Devices:  devices,
		},
	}
}

func (n Node) object() (*corev1.Node, error) {
	capacity := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1000")}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: n.CPU, corev1.ResourceMemory: n.Memory} {
		v, err := resource.ParseQuantity(q)
		if err != nil {
			return nil, fmt.Errorf("cluster: node %s: %s %q: %w", n.Name, name, q, err)
		}
		capacity[name] = v
	}
	if n.GPUs > 0 {
		capacity[GPUResource] = *resource.NewQuantity(int64(n.GPUs), resource.DecimalSI)
	}
	labels := map[string]string{"kubernetes.io/hostname": n.Name, "kubernetes.io/os": "linux", "type": "kwok"}
	for k, v := range n.Labels {
		labels[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels, Annotations: map[string]string{kwokNodeAnnotation: "fake"}},
		Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: capacity.DeepCopy()},
	}, nil
}

// waitNodesReady waits until every node is Ready, or a component exits.
func (c *Cluster) waitNodesReady(ctx context.Context, timeout time.Duration) error {
	var notReady []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.componentsAlive(); err != nil {
			return false, err
		}
		var nodes corev1.NodeList
		if err := c.Client.List(ctx, &nodes); err != nil {
			return false, nil
		}
		notReady = notReady[:0]
		for i := range nodes.Items {
			n := &nodes.Items[i]
			if !nodeReady(n) {
				notReady = append(notReady, n.Name)
				continue
			}
			if err := c.untaintReady(ctx, n); err != nil {
				return false, err
			}
		}
		return len(nodes.Items) > 0 && len(notReady) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("cluster: nodes not Ready (%v): %w", notReady, err)
	}
	return nil
}

// untaintReady removes the node.kubernetes.io/not-ready taint that
// kube-apiserver puts on a new node, once KWOK has made it Ready: the node
// lifecycle controller's job, which does not run here (its heartbeat
// checks have no kubelet to watch).
func (c *Cluster) untaintReady(ctx context.Context, n *corev1.Node) error {
	kept := n.Spec.Taints[:0:0]
	for _, t := range n.Spec.Taints {
		if t.Key != corev1.TaintNodeNotReady {
			kept = append(kept, t)
		}
	}
	if len(kept) == len(n.Spec.Taints) {
		return nil
	}
	patched := n.DeepCopy()
	patched.Spec.Taints = kept
	if err := c.Client.Patch(ctx, patched, client.MergeFrom(n)); err != nil {
		return fmt.Errorf("cluster: removing the not-ready taint of node %s: %w", n.Name, err)
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// componentsAlive fails if a component has exited, with its log's tail.
func (c *Cluster) componentsAlive() error {
	for _, p := range c.components {
		if gone, err := p.exited(); gone {
			return fmt.Errorf("cluster: %s exited (%v); the end of %s:\n%s", p.name, err, p.logPath, p.tail(2048))
		}
	}
	return nil
}

// Alive reports an error if a component or manager has exited unasked.
func (c *Cluster) Alive() error {
	if err := c.componentsAlive(); err != nil {
		return err
	}
	for _, m := range c.managers {
		if err := m.alive(); err != nil {
			return err
		}
	}
	return nil
}

// UserKubeconfig writes a kubeconfig of a user with the given groups (no
// permissions beyond what RBAC grants) into Dir and returns its path and
// REST config.
func (c *Cluster) UserKubeconfig(name string, groups ...string) (string, *rest.Config, error) {
	cfg, err := c.UserConfig(name, groups...)
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(c.Dir, name+".kubeconfig")
	if err := writeKubeconfig(path, cfg); err != nil {
		return "", nil, err
	}
	return path, cfg, nil
}

// Stop stops the managers, then the components, then kube-apiserver and
// etcd, and removes Dir if Start created it.
func (c *Cluster) Stop() error {
	var errs []error
	for i := len(c.managers) - 1; i >= 0; i-- {
		errs = append(errs, c.managers[i].Stop())
	}
	for i := len(c.components) - 1; i >= 0; i-- {
		errs = append(errs, c.components[i].stop(10*time.Second))
	}
	if c.ControlPlane != nil {
		errs = append(errs, c.ControlPlane.Stop())
	}
	errs = append(errs, c.removeOwnDir())
	return errors.Join(errs...)
}
