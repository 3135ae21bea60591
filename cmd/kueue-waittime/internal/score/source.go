package score

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
)

// input is what is scored: everything since the process started (first is
// nil) or the window between two scrapes of one process.
type input struct {
	first, last *scrape
}

// window is the difference of the input's scrapes, or its only scrape.
func (in *input) window() (*scrape, error) {
	if in.first == nil {
		return in.last, nil
	}
	w, change := difference(in.first, in.last)
	switch {
	case change == nil:
		return w, nil
	case change.reversed:
		return nil, cli.Usagef("%s is older than %s (%s, and nothing went up): pass the older scrape first", in.last.source, in.first.source, change.what)
	}
	return nil, cli.Usagef("the two scrapes come from different processes (%s): score each alone or pass scrapes of one process", change.what)
}

// maxBody bounds what is read of one exposition (a manager with thousands
// of ClusterQueues exposes some tens of megabytes).
const maxBody = 1 << 30

// readFiles reads the --file arguments: one exposition, two (a window, the
// older first), or one metrics dump archive. "-" is stdin.
func readFiles(names []string, stdin io.Reader) (*input, error) {
	if len(names) > 2 {
		return nil, cli.FlagError("file", "give one scrape, or two of one process (the older first) for a window; got %d files", len(names))
	}
	if len(names) == 2 && names[0] == "-" && names[1] == "-" {
		return nil, cli.FlagError("file", "standard input (-) can be read once")
	}
	var scrapes []*scrape
	for _, name := range names {
		s, dump, err := readFile(name, stdin, len(names) == 1)
		if err != nil {
			return nil, err
		}
		if dump != nil {
			return dump, nil
		}
		scrapes = append(scrapes, s)
	}
	if len(scrapes) == 1 {
		return &input{last: scrapes[0]}, nil
	}
	return &input{first: scrapes[0], last: scrapes[1]}, nil
}

// readFile reads one --file: an exposition, or (when dumpAllowed) a
// gzip'd tar of them, recognized by its first bytes.
func readFile(name string, stdin io.Reader, dumpAllowed bool) (*scrape, *input, error) {
	var r io.Reader = stdin
	source := name
	if name == "-" {
		source = "standard input"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, cli.FlagError("file", "%v", err)
		}
		defer f.Close()
		r = f
	}
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		if !dumpAllowed {
			return nil, nil, cli.FlagError("file", "%s is a metrics dump: score it alone (it holds its own window)", source)
		}
		in, err := readDump(source, br)
		return nil, in, err
	}
	s, err := parseScrape(source, io.LimitReader(br, maxBody))
	return s, nil, err
}

// dumpEntry is one scrape of a metrics dump.
type dumpEntry struct {
	name   string
	scrape *scrape
}

// readDump reads a Kueue performance runner's metricsDump.tgz: a gzip'd
// tar of text expositions named <unix milliseconds>.prometheus, one per
// scrape of one manager process. The entries are ordered by name (numbers
// by value) and every consecutive pair is checked to come from one
// process; the input is the first and the last.
func readDump(source string, r io.Reader) (*input, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, cli.Usagef("%s: unreadable metrics dump (%v)", source, err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	var entries []dumpEntry
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, cli.Usagef("%s: unreadable metrics dump (%v)", source, err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		s, err := parseScrape(source+":"+hdr.Name, io.LimitReader(tr, maxBody))
		if err != nil {
			var ue *cli.UsageError
			if !errors.As(err, &ue) {
				return nil, cli.Usagef("%s: unreadable metrics dump (%v)", source, err)
			}
			return nil, err
		}
		s.at = hdr.ModTime
		entries = append(entries, dumpEntry{name: hdr.Name, scrape: s})
	}
	if len(entries) == 0 {
		return nil, cli.Usagef("%s: the metrics dump holds no scrape", source)
	}
	slices.SortStableFunc(entries, func(a, b dumpEntry) int { return compareNames(a.name, b.name) })
	for i := 1; i < len(entries); i++ {
		if _, change := difference(entries[i-1].scrape, entries[i].scrape); change != nil {
			return nil, cli.Usagef("%s: scrapes %s and %s come from different processes (%s): extract two scrapes of one process and pass them with --file",
				source, entries[i-1].name, entries[i].name, change.what)
		}
	}
	if len(entries) == 1 {
		return &input{last: entries[0].scrape}, nil
	}
	return &input{first: entries[0].scrape, last: entries[len(entries)-1].scrape}, nil
}

// compareNames orders dump entries by name, comparing names whose stems
// (before the first dot) are all digits by numeric value.
func compareNames(a, b string) int {
	sa, _, _ := strings.Cut(path.Base(a), ".")
	sb, _, _ := strings.Cut(path.Base(b), ".")
	if digits(sa) && digits(sb) {
		sa, sb = strings.TrimLeft(sa, "0"), strings.TrimLeft(sb, "0")
		if c := cmp.Compare(len(sa), len(sb)); c != 0 {
			return c
		}
		if c := cmp.Compare(sa, sb); c != 0 {
			return c
		}
	}
	return cmp.Compare(a, b)
}

func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// fetchFunc scrapes a live endpoint once and returns the body.
type fetchFunc func(ctx context.Context) ([]byte, error)

// readLive scrapes once, or (interval > 0) twice interval apart.
func readLive(ctx context.Context, source string, fetch fetchFunc, interval time.Duration) (*input, error) {
	once := func() (*scrape, error) {
		at := time.Now()
		body, err := fetch(ctx)
		if err != nil {
			return nil, err
		}
		s, err := parseScrape(source, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		s.at = at
		return s, nil
	}
	first, err := once()
	if err != nil {
		return nil, err
	}
	if interval <= 0 {
		return &input{last: first}, nil
	}
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("interrupted before the second scrape: %w", ctx.Err())
	case <-time.After(interval):
	}
	last, err := once()
	if err != nil {
		return nil, err
	}
	first.source += " (first scrape)"
	last.source += " (second scrape)"
	return &input{first: first, last: last}, nil
}

// acceptText asks for the text exposition format, which the parser reads.
const acceptText = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// httpFetcher GETs a /metrics URL, with a bearer token when token is not
// empty. A 4xx answer is invalid input (exit 2); other failures are not.
func httpFetcher(url string, insecure bool, token string) fetchFunc {
	client := &http.Client{
		Timeout: time.Minute,
		Transport: &http.Transport{
			Proxy:           http.ProxyFromEnvironment,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: insecure}, //nolint:gosec // the user asked for it
		},
	}
	return func(ctx context.Context) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, cli.FlagError("url", "%v", err)
		}
		req.Header.Set("Accept", acceptText)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", url, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, statusError("GET "+url, resp.StatusCode, resp.Status)
		}
		return io.ReadAll(io.LimitReader(resp.Body, maxBody))
	}
}

// statusError describes a non-200 answer; 4xx answers are usage errors.
func statusError(what string, code int, status string) error {
	hint := ""
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		hint = ": the manager's metrics endpoint needs a token allowed to get /metrics (--token-file, or the kubeconfig's user)"
	case http.StatusNotFound:
		hint = ": wrong path or service? the manager serves /metrics"
	}
	if code >= 400 && code < 500 {
		return cli.Usagef("%s: %s%s", what, status, hint)
	}
	return fmt.Errorf("%s: %s", what, status)
}

// serviceTarget is a --service value: NAMESPACE/[SCHEME:]NAME:PORT.
type serviceTarget struct {
	namespace, scheme, name, port string
}

// parseService parses NAMESPACE/[SCHEME:]NAME:PORT; the scheme defaults
// to https, as the manager's metrics service serves.
func parseService(raw string) (serviceTarget, error) {
	ns, rest, ok := strings.Cut(strings.TrimSpace(raw), "/")
	parts := strings.Split(rest, ":")
	bad := cli.FlagError("service", "want NAMESPACE/NAME:PORT (or NAMESPACE/http:NAME:PORT), such as kueue-system/kueue-controller-manager-metrics-service:8443, got %q", raw)
	if !ok || ns == "" || len(parts) < 2 || len(parts) > 3 || slices.Contains(parts, "") {
		return serviceTarget{}, bad
	}
	t := serviceTarget{namespace: ns, scheme: "https", name: parts[len(parts)-2], port: parts[len(parts)-1]}
	if len(parts) == 3 {
		t.scheme = parts[0]
		if t.scheme != "http" && t.scheme != "https" {
			return serviceTarget{}, bad
		}
	}
	return t, nil
}

// rawPath is the API server path kubectl get --raw would use.
func (t serviceTarget) rawPath(metricsPath string) string {
	return fmt.Sprintf("/api/v1/namespaces/%s/services/%s:%s:%s/proxy%s", t.namespace, t.scheme, t.name, t.port, metricsPath)
}

// serviceFetcher GETs metricsPath of a Service through the API server's
// service proxy, with the credentials of kubeconfig (or the default
// loading rules: $KUBECONFIG, ~/.kube/config, in-cluster).
func serviceFetcher(kubeconfig string, t serviceTarget, metricsPath string) (fetchFunc, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, cli.FlagError("kubeconfig", "%v", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, cli.FlagError("kubeconfig", "%v", err)
	}
	what := "GET " + t.rawPath(metricsPath)
	return func(ctx context.Context) ([]byte, error) {
		res := cs.CoreV1().RESTClient().Get().AbsPath(t.rawPath(metricsPath)).
			SetHeader("Accept", acceptText).Do(ctx)
		body, err := res.Raw()
		if err != nil {
			err = res.Error() // a Status in the body says more

			var status apierrors.APIStatus
			if errors.As(err, &status) && status.Status().Code != 0 {
				code := int(status.Status().Code)
				text := fmt.Sprintf("%d %s", code, http.StatusText(code))
				if msg := status.Status().Message; msg != "" {
					text += " (" + msg + ")"
				}
				return nil, statusError(what, code, text)
			}
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return body, nil
	}, nil
}
