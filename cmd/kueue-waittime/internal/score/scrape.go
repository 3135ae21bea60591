package score

import (
	"context"
	"io"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
)

// ScrapeURL scores everything a manager's /metrics endpoint at url holds
// since the manager started, as `score --url URL` does: a bearer token
// when token is not empty, the server's certificate unverified when
// insecure. Unlike the command, a manager that scored no workload yet gives
// a report (of zero scored), not an error; one without wait time
// estimation metrics (the gate off) is an error.
func ScrapeURL(ctx context.Context, url string, insecure bool, token string) (Report, error) {
	in, err := readLive(ctx, url, httpFetcher(url, insecure, token), 0)
	if err != nil {
		return Report{}, err
	}
	if !in.last.hasEstimator() {
		return Report{}, cli.Usagef("no wait time estimation metrics in %s: is the WaitTimeEstimation feature gate on?", in.last.source)
	}
	return buildReport(Window{Scrapes: 1, Sources: []string{in.last.source}}, in.last), nil
}

// WriteTable prints a report as the score command's table does.
func WriteTable(w io.Writer, r Report) error {
	return writeTable(w, r)
}
