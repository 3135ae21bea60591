package score

import (
	"context"
	"io"
)

// ScrapeURL scores everything a manager's /metrics endpoint at url holds
// since the manager started, as `score --url URL` does: a bearer token
// when token is not empty, the server's certificate unverified when
// insecure.
func ScrapeURL(ctx context.Context, url string, insecure bool, token string) (Report, error) {
	in, err := readLive(ctx, url, httpFetcher(url, insecure, token), 0)
	if err != nil {
		return Report{}, err
	}
	return score(in)
}

// WriteTable prints a report as the score command's table does.
func WriteTable(w io.Writer, r Report) error {
	return writeTable(w, r)
}
