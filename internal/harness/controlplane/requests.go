package controlplane

import (
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// RequestCounter counts the API requests a manager makes, by method and
// resource (for example "PATCH workloads/status"); a watch counts as
// "WATCH <resource>". Give it to StartKueue with WithRequestCounter: it
// then counts the manager's requests and its visibility server's, the
// latter under keys prefixed "visibility: ".
type RequestCounter struct {
	mu       sync.Mutex
	counts   map[string]int
	requests []string
}

// Counts returns a copy of the counts so far.
func (c *RequestCounter) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// CountsMatching counts, like Counts, only the requests whose path
// contains one of the given substrings (for example "/namespaces/team-a/"
// and "/clusterqueues/team-a").
func (c *RequestCounter) CountsMatching(substrings ...string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int)
	for _, r := range c.requests {
		method, path, _ := strings.Cut(r, " ")
		for _, sub := range substrings {
			if strings.Contains(path, sub) {
				out[method+" "+resourceOf(path)]++
				break
			}
		}
	}
	return out
}

func (c *RequestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return c.wrapSource("", rt)
}

// wrapSource counts every request through rt under keys prefixed source.
func (c *RequestCounter) wrapSource(source string, rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		method := req.Method
		if req.URL.Query().Get("watch") == "true" {
			method = "WATCH"
		}
		c.record(source+method+" "+resourceOf(req.URL.Path), method+" "+req.URL.Path)
		return rt.RoundTrip(req)
	})
}

func (c *RequestCounter) record(key, request string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = make(map[string]int)
	}
	c.counts[key]++
	c.requests = append(c.requests, request)
}

// countingProxy serves plain HTTP on 127.0.0.1 and forwards every request
// to kube-apiserver with cfg's credentials, counting it under source: a
// kubeconfig that points at it (see kubeconfig) makes the requests of a
// client configured only by a kubeconfig file countable.
type countingProxy struct {
	url    string
	server *http.Server
}

func (c *RequestCounter) startProxy(cfg *rest.Config, source string) (*countingProxy, error) {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = c.wrapSource(source, rt)
	rp.FlushInterval = -1 // watches stream
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{url: "http://" + ln.Addr().String(), server: &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = p.server.Serve(ln) }()
	return p, nil
}

// kubeconfig writes a kubeconfig that reaches kube-apiserver through the
// proxy (which holds the credentials) into path.
func (p *countingProxy) kubeconfig(path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["proxy"] = &clientcmdapi.Cluster{Server: p.url}
	kc.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	kc.CurrentContext = "proxy"
	return clientcmd.WriteToFile(*kc, path)
}

func (p *countingProxy) stop() error {
	if p == nil {
		return nil
	}
	return p.server.Close()
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// resourceOf turns /apis/g/v/namespaces/ns/workloads/name/status into
// "workloads/status", /api/v1/namespaces into "namespaces".
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return path
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) > 2 {
		parts = parts[2:]
	}
	switch len(parts) {
	case 0:
		return "discovery"
	case 1, 2:
		return parts[0]
	default:
		return parts[0] + "/" + parts[2]
	}
}

// KueueOption configures StartKueue.
type KueueOption func(*kueueOptions)

type kueueOptions struct {
	counter    *RequestCounter
	batchJobs  bool
	multiKueue *multiKueueOptions
}

// WithRequestCounter counts every API request the Kueue manager makes.
func WithRequestCounter(c *RequestCounter) KueueOption {
	return func(o *kueueOptions) { o.counter = c }
}

func (o kueueOptions) restConfig(cfg *rest.Config) *rest.Config {
	if o.counter == nil {
		return cfg
	}
	out := rest.CopyConfig(cfg)
	out.Wrap(o.counter.wrap)
	return out
}
