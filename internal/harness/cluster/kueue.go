package cluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/controlplane"
)

// The names Kueue's manifests give the objects this file looks for.
const (
	kueueNamespace        = "kueue-system"
	managerDeploymentName = "kueue-controller-manager"
	managerServiceAccount = "kueue-controller-manager"
	managerConfigMap      = "kueue-manager-config"
	managerConfigKey      = "controller_manager_config.yaml"
	webhookSecret         = "kueue-webhook-server-cert"
	fieldOwner            = client.FieldOwner("kueue-waittime-cluster")
)

// KueueOptions say which build of Kueue to deploy and how.
type KueueOptions struct {
	// Manifests is the rendered manifests file (`make manifests`:
	// _output/manifests/kueue-waittime.yaml). Default: $KUEUE_MANIFESTS.
	Manifests string
	// ImageLayout is the OCI layout of the manager image (`make image`:
	// _output/image/oci); the manager binary is its /manager. Default:
	// $KUEUE_IMAGE_LAYOUT.
	ImageLayout string
	// Replicas is how many manager processes run (the Deployment's
	// replicas; default 1). They elect a leader as the Deployment's pods do.
	Replicas int
	// EditConfiguration, when set, changes the manager's Configuration (the
	// manifests' ConfigMap, decoded) before the managers start: for tests
	// of bad configurations and of settings other than the manifests'.
	EditConfiguration func(map[string]any)
}

// Manager is one manager process: the image's /manager, started with the
// manifests' arguments and Configuration, authenticated with a token of the
// manifests' ServiceAccount.
//
// What a pod would get from its own network namespace and the kubelet, the
// cluster supplies: every manager has its own ports on 127.0.0.1 (health,
// metrics, webhooks, visibility), and the cluster copies the webhook
// certificate Secret into the manager's certificate directory as the
// kubelet's secret volume does. The manifests' Services become ExternalName
// Services to localhost and their references (webhooks, APIService, CRD
// conversion) point at the first manager's ports.
type Manager struct {
	Name string
	// Dir holds its Configuration, kubeconfig and certificates.
	Dir string
	// Ports on 127.0.0.1.
	HealthPort, MetricsPort, WebhookPort, VisibilityPort int
	// Log is the path of its log file.
	Log string

	binary  string
	args    []string
	cluster *Cluster
	restart RestartPolicy
	proc    atomic.Pointer[process]
	stopSec context.CancelFunc
	// running says the manager should be running: set by Start, cleared
	// by Kill, Stop and Exited. Cluster.Alive checks only those.
	running      atomic.Bool
	restarts     atomic.Int32
	superviseErr atomic.Pointer[error]
}

// RestartPolicy says whether a manager that exits by itself is started
// again, as a pod's restartPolicy does.
type RestartPolicy int

const (
	// RestartAlways starts it again (the Deployment's pods).
	RestartAlways RestartPolicy = iota
	// RestartNever leaves it exited: for managers expected to fail.
	RestartNever
)

// DeployKueue applies the rendered manifests (but the manager Deployment,
// whose pods run here as processes) and starts the managers. It returns
// once the first manager is ready, its webhooks admit objects and the
// visibility API is Available.
func (c *Cluster) DeployKueue(ctx context.Context, opts KueueOptions) ([]*Manager, error) {
	if opts.Manifests == "" {
		opts.Manifests = os.Getenv("KUEUE_MANIFESTS")
	}
	if opts.ImageLayout == "" {
		opts.ImageLayout = os.Getenv("KUEUE_IMAGE_LAYOUT")
	}
	if opts.Manifests == "" || opts.ImageLayout == "" {
		return nil, errors.New("cluster: set KUEUE_MANIFESTS and KUEUE_IMAGE_LAYOUT (make manifests and make image write them)")
	}
	if opts.Replicas == 0 {
		opts.Replicas = 1
	}
	if err := checkVisibilityCertDir(); err != nil {
		return nil, err
	}
	objects, err := readManifests(opts.Manifests)
	if err != nil {
		return nil, err
	}
	binary := filepath.Join(c.Dir, "bin", "manager")
	if err := extractFile(opts.ImageLayout, "/manager", binary); err != nil {
		return nil, err
	}
	deploymentArgs, configText, err := managerSpec(objects)
	if err != nil {
		return nil, err
	}
	var configuration map[string]any
	if err := yaml.Unmarshal([]byte(configText), &configuration); err != nil {
		return nil, fmt.Errorf("cluster: the manifests' Configuration: %w", err)
	}
	if opts.EditConfiguration != nil {
		opts.EditConfiguration(configuration)
	}
	c.deployed = &deployment{binary: binary, args: deploymentArgs, configuration: configuration}
	managers := make([]*Manager, opts.Replicas)
	for i := range managers {
		m, err := c.newManager()
		if err != nil {
			return nil, err
		}
		managers[i] = m
	}
	if err := c.applyManifests(ctx, objects, managers[0]); err != nil {
		return nil, err
	}
	if c.deployed.kubeconfig, err = c.serviceAccountKubeconfig(ctx, kueueNamespace, managerServiceAccount); err != nil {
		return nil, err
	}
	for _, m := range managers {
		if err := m.configure(configuration, c.deployed.kubeconfig); err != nil {
			return nil, err
		}
		if err := m.Start(ctx); err != nil {
			return nil, err
		}
	}
	if err := managers[0].WaitReady(ctx, 3*time.Minute); err != nil {
		return nil, err
	}
	if err := c.waitVisibilityAvailable(ctx, time.Minute); err != nil {
		return nil, err
	}
	return managers, nil
}

// visibilityCertDir is where the manager's visibility server writes its
// self-signed certificate (an emptyDir in the manifests' pod).
const visibilityCertDir = "/visibility"

// checkVisibilityCertDir fails, saying why, when the manager could not
// write its visibility certificate on this host.
func checkVisibilityCertDir() error {
	if err := os.MkdirAll(visibilityCertDir, 0o755); err != nil {
		return fmt.Errorf("cluster: the manager writes its visibility server's certificate to %s, as in its pod: %w (run as root)", visibilityCertDir, err)
	}
	probe := filepath.Join(visibilityCertDir, ".kueue-waittime-probe")
	if err := os.WriteFile(probe, nil, 0o600); err != nil {
		return fmt.Errorf("cluster: the manager writes its visibility server's certificate to %s, as in its pod: %w (run as root)", visibilityCertDir, err)
	}
	return os.Remove(probe)
}

func readManifests(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w (make manifests renders it)", err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objects []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objects, nil
		}
		if err != nil {
			return nil, fmt.Errorf("cluster: %s: %w", path, err)
		}
		var content map[string]any
		if err := yaml.Unmarshal(doc, &content); err != nil {
			return nil, fmt.Errorf("cluster: %s: document %d: %w", path, len(objects)+1, err)
		}
		if len(content) > 0 {
			objects = append(objects, &unstructured.Unstructured{Object: content})
		}
	}
}

// managerSpec returns the manager container's arguments (from the
// Deployment) and the Configuration text (from the ConfigMap).
func managerSpec(objects []*unstructured.Unstructured) (args []string, configText string, err error) {
	var foundDeployment, foundConfig bool
	for _, u := range objects {
		switch {
		case u.GetKind() == "Deployment" && u.GetName() == managerDeploymentName:
			containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				cm, _ := c.(map[string]any)
				if cm["name"] != "manager" {
					continue
				}
				a, _, _ := unstructured.NestedStringSlice(cm, "args")
				args, foundDeployment = a, true
			}
		case u.GetKind() == "ConfigMap" && u.GetName() == managerConfigMap:
			configText, foundConfig, _ = unstructured.NestedString(u.Object, "data", managerConfigKey)
		}
	}
	if !foundDeployment || !foundConfig {
		return nil, "", fmt.Errorf("cluster: the manifests lack the %s Deployment's manager container or the %s ConfigMap's %s", managerDeploymentName, managerConfigMap, managerConfigKey)
	}
	return args, configText, nil
}

// deployment is what DeployKueue deployed, for AddManager.
type deployment struct {
	binary        string
	args          []string
	configuration map[string]any
	kubeconfig    []byte
}

// AddManager starts one more manager process, as scaling the Deployment up
// does, with the deployed Configuration changed by edit (nil: as
// deployed). It does not wait for the manager to be ready: one with a bad
// Configuration exits (add it with RestartNever and see Manager.Exited).
func (c *Cluster) AddManager(ctx context.Context, restart RestartPolicy, edit func(map[string]any)) (*Manager, error) {
	if c.deployed == nil {
		return nil, errors.New("cluster: DeployKueue first")
	}
	configuration, err := deepCopyJSON(c.deployed.configuration)
	if err != nil {
		return nil, err
	}
	if edit != nil {
		edit(configuration)
	}
	m, err := c.newManager()
	if err != nil {
		return nil, err
	}
	m.restart = restart
	if err := m.configure(configuration, c.deployed.kubeconfig); err != nil {
		return nil, err
	}
	return m, m.Start(ctx)
}

// newManager makes the next manager (kueue-manager-<n>), with free ports.
func (c *Cluster) newManager() (*Manager, error) {
	name := fmt.Sprintf("kueue-manager-%d", len(c.managers))
	m := &Manager{Name: name, Dir: filepath.Join(c.Dir, name), binary: c.deployed.binary, cluster: c}
	c.managers = append(c.managers, m)
	deploymentArgs := c.deployed.args
	for _, p := range []*int{&m.HealthPort, &m.MetricsPort, &m.WebhookPort, &m.VisibilityPort} {
		port, err := controlplane.FreePort()
		if err != nil {
			return nil, err
		}
		*p = port
	}
	if err := os.MkdirAll(filepath.Join(m.Dir, "certs"), 0o755); err != nil {
		return nil, err
	}
	for _, a := range deploymentArgs {
		if strings.HasPrefix(a, "--config=") {
			a = "--config=" + filepath.Join(m.Dir, "config.yaml")
		}
		m.args = append(m.args, a)
	}
	m.args = append(m.args, "--kubeconfig="+filepath.Join(m.Dir, "kubeconfig"))
	return m, nil
}

// configure writes the manager's Configuration (the manifests', with its
// own ports, certificate directory and the leader-election namespace a pod
// would read from its ServiceAccount volume) and kubeconfig.
func (m *Manager) configure(configuration map[string]any, kubeconfig []byte) error {
	cfg, err := deepCopyJSON(configuration)
	if err != nil {
		return err
	}
	set := func(value any, path ...string) error {
		return unstructured.SetNestedField(cfg, value, path...)
	}
	for _, e := range []error{
		set(fmt.Sprintf("127.0.0.1:%d", m.HealthPort), "health", "healthProbeBindAddress"),
		set(fmt.Sprintf("127.0.0.1:%d", m.MetricsPort), "metrics", "bindAddress"),
		set(int64(m.WebhookPort), "webhook", "port"),
		set(filepath.Join(m.Dir, "certs"), "webhook", "certDir"),
		set(int64(m.VisibilityPort), "visibilityServer", "bindPort"),
		// In a pod, the leader-election namespace is read from the
		// ServiceAccount volume; it is the manifests' namespace.
		set(kueueNamespace, "leaderElection", "resourceNamespace"),
	} {
		if e != nil {
			return fmt.Errorf("cluster: configuring %s: %w", m.Name, e)
		}
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(m.Dir, "config.yaml"), data, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(m.Dir, "kubeconfig"), kubeconfig, 0o600)
}

func deepCopyJSON(in map[string]any) (map[string]any, error) {
	data, err := yaml.Marshal(in)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, yaml.Unmarshal(data, &out)
}

// Start starts the manager process (again, after Kill or Stop) and keeps
// its certificate directory in step with the webhook Secret. Unless the
// manager was added with RestartNever, a process that exits by itself is
// started again, as the kubelet does for a pod with restartPolicy Always
// (here after 1 s, doubling to 30 s; the kubelet's back-off starts at 10 s):
// Kueue exits when it loses its leader election, for one.
func (m *Manager) Start(ctx context.Context) error {
	if p := m.proc.Load(); p != nil {
		if gone, _ := p.exited(); !gone {
			return fmt.Errorf("cluster: %s is running", m.Name)
		}
	}
	syncCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.stopSec = cancel
	go m.syncCertificates(syncCtx)
	p, err := startProcess(m.cluster.Dir, m.Name, m.Dir, nil, m.binary, m.args...)
	if err != nil {
		cancel()
		return err
	}
	m.proc.Store(p)
	m.Log = p.logPath
	m.running.Store(true)
	go m.supervise(syncCtx, p)
	return nil
}

// supervise restarts the process p when it exits while the manager should
// be running, until ctx ends (Kill or Stop).
func (m *Manager) supervise(ctx context.Context, p *process) {
	backoff := time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.done:
		}
		if m.restart == RestartNever || !m.running.Load() {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
		next, err := startProcess(m.cluster.Dir, m.Name, m.Dir, nil, m.binary, m.args...)
		if err != nil {
			m.superviseErr.Store(&err)
			return
		}
		m.restarts.Add(1)
		m.proc.Store(next)
		p = next
	}
}

// Restarts is how many times the manager was started again after it
// exited by itself.
func (m *Manager) Restarts() int { return int(m.restarts.Load()) }

// syncCertificates plays the kubelet's secret volume: it writes the
// webhook Secret's keys into the certificate directory whenever they
// change, until ctx ends.
func (m *Manager) syncCertificates(ctx context.Context) {
	var last string
	_ = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var s corev1.Secret
		if err := m.cluster.Client.Get(ctx, client.ObjectKey{Namespace: kueueNamespace, Name: webhookSecret}, &s); err != nil {
			return false, nil
		}
		keys := make([]string, 0, len(s.Data))
		for k := range s.Data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var b strings.Builder
		for _, k := range keys {
			b.WriteString(k)
			b.Write(s.Data[k])
		}
		if b.String() == last {
			return false, nil
		}
		for _, k := range keys {
			path := filepath.Join(m.Dir, "certs", k)
			if err := os.WriteFile(path+".tmp", s.Data[k], 0o600); err != nil {
				return false, nil
			}
			if err := os.Rename(path+".tmp", path); err != nil {
				return false, nil
			}
		}
		last = b.String()
		return false, nil
	})
}

// Kill kills the manager with SIGKILL, as kill -9 does, and does not
// restart it.
func (m *Manager) Kill() error {
	m.running.Store(false)
	m.stopSec()
	return m.proc.Load().kill()
}

// Stop stops the manager with SIGTERM (SIGKILL after 30s).
func (m *Manager) Stop() error {
	p := m.proc.Load()
	if p == nil {
		return nil
	}
	m.running.Store(false)
	m.stopSec()
	return p.stop(30 * time.Second)
}

// alive fails if the manager should run but cannot: it exited and is not
// to be restarted, or restarting it failed.
func (m *Manager) alive() error {
	if !m.running.Load() {
		return nil
	}
	if err := m.superviseErr.Load(); err != nil {
		return fmt.Errorf("cluster: restarting manager %s: %w", m.Name, *err)
	}
	p := m.proc.Load()
	if gone, err := p.exited(); gone && m.restart == RestartNever {
		return fmt.Errorf("cluster: manager %s exited (%v); the end of %s:\n%s", m.Name, err, m.Log, p.tail(4096))
	}
	return nil
}

// Exited waits up to timeout for a manager added with RestartNever to exit
// by itself and returns its log's tail; ok is false if it is still running.
func (m *Manager) Exited(timeout time.Duration) (logTail string, ok bool) {
	p := m.proc.Load()
	select {
	case <-p.done:
		m.running.Store(false)
		m.stopSec()
		return p.tail(8192), true
	case <-time.After(timeout):
		return "", false
	}
}

// WaitReady waits until the manager's readiness probe passes (Kueue's
// readyz waits for the webhook certificates).
func (m *Manager) WaitReady(ctx context.Context, timeout time.Duration) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", m.HealthPort)
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := m.alive(); err != nil {
			return false, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		log := m.proc.Load().tail(64 << 10)
		return fmt.Errorf("cluster: %s not ready (restarted %d times): %w; the last error in %s: %s", m.Name, m.Restarts(), err, m.Log, lastErrorLine(log))
	}
	return nil
}

// lastErrorLine is the last error-level line of a manager's log (JSON or
// klog), or its last line.
func lastErrorLine(log string) string {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], `"level":"error"`) || strings.HasPrefix(lines[i], "E") {
			return lines[i]
		}
	}
	return lines[len(lines)-1]
}

// MetricsURL is the manager's metrics endpoint (HTTPS, authenticated and
// authorized as the manifests configure it).
func (m *Manager) MetricsURL() string {
	return fmt.Sprintf("https://127.0.0.1:%d/metrics", m.MetricsPort)
}

// Scrape fetches the manager's metrics with a bearer token. The server's
// certificate is self-signed, as in a default deployment (Prometheus
// scrapes it with insecure_skip_verify there too).
func (m *Manager) Scrape(ctx context.Context, token string) (status int, body string, err error) {
	return httpsGet(ctx, m.MetricsURL(), token)
}

// GetVisibility gets path (such as
// /apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cq/pendingworkloads)
// from this manager's own visibility server, not through the aggregation
// layer (which reaches only the first manager), with a bearer token that
// the server reviews with kube-apiserver (delegated authentication and
// authorization).
func (m *Manager) GetVisibility(ctx context.Context, token, path string) (status int, body string, err error) {
	return httpsGet(ctx, fmt.Sprintf("https://127.0.0.1:%d%s", m.VisibilityPort, path), token)
}

// httpsGet gets url with a bearer token (none when empty), trusting the
// self-signed serving certificate of a manager.
func httpsGet(ctx context.Context, url, token string) (status int, body string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	// The client gives up on a request that hangs (ctx may be minutes
	// long), later than a loaded machine takes to answer one.
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed, as deployed
	}}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), err
}

// applyManifests applies every object but the manager Deployment, server
// side: CRDs first (until Established), then namespaces, then the rest.
// Services of kueue-system become ExternalName Services to localhost, and
// references to them point at the target ports of first.
func (c *Cluster) applyManifests(ctx context.Context, objects []*unstructured.Unstructured, first *Manager) error {
	targets := map[string]int64{} // service name → port the first manager listens on
	for _, u := range objects {
		if u.GetKind() != "Service" || u.GetNamespace() != kueueNamespace {
			continue
		}
		ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
		for _, p := range ports {
			pm, _ := p.(map[string]any)
			target := intstr.Parse(fmt.Sprint(pm["targetPort"]))
			if port, ok := first.portFor(target); ok {
				targets[u.GetName()] = port
			}
		}
	}
	var crds, namespaces, others []*unstructured.Unstructured
	for _, u := range objects {
		u = u.DeepCopy()
		switch {
		case u.GetKind() == "Deployment" && u.GetName() == managerDeploymentName:
			continue
		case u.GetKind() == "CustomResourceDefinition":
			crds = append(crds, u)
		case u.GetKind() == "Namespace":
			namespaces = append(namespaces, u)
		default:
			others = append(others, u)
		}
		if err := localizeServices(u, targets); err != nil {
			return err
		}
	}
	apply := func(u *unstructured.Unstructured) error {
		err := c.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), fieldOwner, client.ForceOwnership)
		if err != nil {
			return fmt.Errorf("cluster: applying %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		return nil
	}
	for _, u := range crds {
		if err := apply(u); err != nil {
			return err
		}
	}
	for _, u := range crds {
		if err := c.waitCondition(ctx, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", u.GetName(), "Established", time.Minute); err != nil {
			return err
		}
	}
	for _, u := range namespaces {
		if err := apply(u); err != nil {
			return err
		}
	}
	// Kueue binds a Role in kube-system, which kube-apiserver creates
	// shortly after it starts.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, client.ObjectKey{Name: "kube-system"}, &corev1.Namespace{})
		return err == nil, client.IgnoreNotFound(err)
	}); err != nil {
		return fmt.Errorf("cluster: waiting for namespace kube-system: %w", err)
	}
	for _, u := range others {
		if err := apply(u); err != nil {
			return err
		}
	}
	return nil
}

// portFor maps a Service's targetPort to the manager's port, by the
// container port names and numbers of Kueue's manifests.
func (m *Manager) portFor(target intstr.IntOrString) (int64, bool) {
	switch target.String() {
	case "9443", "webhook-server":
		return int64(m.WebhookPort), true
	case "8443", "https", "metrics":
		return int64(m.MetricsPort), true
	case "8082", "visibility":
		return int64(m.VisibilityPort), true
	}
	return 0, false
}

// localizeServices rewrites a Service of kueue-system into an ExternalName
// Service to localhost, and a reference to one (webhook client configs,
// CRD conversion webhooks, APIServices) to the first manager's port.
func localizeServices(u *unstructured.Unstructured, targets map[string]int64) error {
	retarget := func(ref map[string]any) {
		if ref == nil || ref["namespace"] != kueueNamespace {
			return
		}
		if port, ok := targets[fmt.Sprint(ref["name"])]; ok {
			ref["port"] = port
		}
	}
	switch u.GetKind() {
	case "Service":
		if u.GetNamespace() != kueueNamespace {
			return nil
		}
		spec, _, _ := unstructured.NestedMap(u.Object, "spec")
		delete(spec, "selector")
		delete(spec, "clusterIP")
		delete(spec, "clusterIPs")
		spec["type"] = "ExternalName"
		spec["externalName"] = "localhost"
		return unstructured.SetNestedMap(u.Object, spec, "spec")
	case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
		webhooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		for _, w := range webhooks {
			wm, _ := w.(map[string]any)
			cc, _ := wm["clientConfig"].(map[string]any)
			svc, _ := cc["service"].(map[string]any)
			retarget(svc)
		}
		return unstructured.SetNestedSlice(u.Object, webhooks, "webhooks")
	case "CustomResourceDefinition":
		svc, found, _ := unstructured.NestedMap(u.Object, "spec", "conversion", "webhook", "clientConfig", "service")
		if !found {
			return nil
		}
		retarget(svc)
		return unstructured.SetNestedMap(u.Object, svc, "spec", "conversion", "webhook", "clientConfig", "service")
	case "APIService":
		svc, found, _ := unstructured.NestedMap(u.Object, "spec", "service")
		if !found {
			return nil
		}
		retarget(svc)
		return unstructured.SetNestedMap(u.Object, svc, "spec", "service")
	}
	return nil
}

// waitCondition waits until an object's status condition is True.
func (c *Cluster) waitCondition(ctx context.Context, apiVersion, kind, namespace, name, condition string, timeout time.Duration) error {
	var last []any
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		last, _, _ = unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, cond := range last {
			cm, _ := cond.(map[string]any)
			if cm["type"] == condition {
				return cm["status"] == "True", nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("cluster: %s %s not %s: %w (conditions %v)", kind, name, condition, err, last)
	}
	return nil
}

// waitVisibilityAvailable waits until the aggregation layer reports every
// Kueue visibility APIService Available.
func (c *Cluster) waitVisibilityAvailable(ctx context.Context, timeout time.Duration) error {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("apiregistration.k8s.io/v1")
	list.SetKind("APIServiceList")
	if err := c.Client.List(ctx, list); err != nil {
		return fmt.Errorf("cluster: listing APIServices: %w", err)
	}
	for _, u := range list.Items {
		if !strings.HasSuffix(u.GetName(), ".visibility.kueue.x-k8s.io") {
			continue
		}
		if err := c.waitCondition(ctx, "apiregistration.k8s.io/v1", "APIService", "", u.GetName(), "Available", timeout); err != nil {
			return errors.Join(err, c.Alive())
		}
	}
	return nil
}

// ServiceAccountToken returns a token of a ServiceAccount (TokenRequest,
// valid for a day), as a projected token volume gives a pod.
func (c *Cluster) ServiceAccountToken(ctx context.Context, namespace, name string) (string, error) {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(24 * 3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("cluster: a token of ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}

// serviceAccountKubeconfig returns a kubeconfig that authenticates with a
// ServiceAccount's token.
func (c *Cluster) serviceAccountKubeconfig(ctx context.Context, namespace, name string) ([]byte, error) {
	token, err := c.ServiceAccountToken(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	cfg := rest.AnonymousClientConfig(c.Config)
	cfg.BearerToken = token
	return kubeconfigBytes(cfg)
}

func kubeconfigBytes(cfg *rest.Config) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "user"}
	kc.CurrentContext = "local"
	return clientcmd.Write(*kc)
}

func writeKubeconfig(path string, cfg *rest.Config) error {
	data, err := kubeconfigBytes(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
