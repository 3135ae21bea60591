package controlplane

import (
	"maps"
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// RequestCounter counts the API requests a manager makes, by method and
// resource (for example "PATCH workloads/status"), leaving out watches.
// Give it to StartKueue with WithRequestCounter.
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
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.URL.Query().Get("watch") != "true" {
			key := req.Method + " " + resourceOf(req.URL.Path)
			c.mu.Lock()
			if c.counts == nil {
				c.counts = make(map[string]int)
			}
			c.counts[key]++
			c.requests = append(c.requests, req.Method+" "+req.URL.Path)
			c.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
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
	counter *RequestCounter
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
