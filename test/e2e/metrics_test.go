package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metricsReaderRole is the manifests' ClusterRole that may GET /metrics.
const metricsReaderRole = "kueue-metrics-reader"

// TestMetricsServedOverHTTPSToAnAuthorizedServiceAccount scrapes the
// manager's metrics endpoint the way Prometheus does in a cluster: over
// HTTPS with a ServiceAccount token, authorized by a binding to the
// manifests' metrics-reader ClusterRole. Without the binding the server
// refuses the token (403); without a token it refuses the request (401).
func TestMetricsServedOverHTTPSToAnAuthorizedServiceAccount(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const ns = "monitoring"
	create(ctx, t,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "stranger", Namespace: ns}},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "prometheus-kueue-metrics"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReaderRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "prometheus", Namespace: ns}},
		},
	)
	token, err := cl.ServiceAccountToken(ctx, ns, "prometheus")
	if err != nil {
		t.Fatal(err)
	}
	var body string
	eventually(ctx, t, time.Minute, "an authorized scrape", func(ctx context.Context) error {
		status, b, err := manager.Scrape(ctx, token)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return errorStatus(status, b)
		}
		body = b
		return nil
	})
	for _, series := range []string{
		"kueue_admission_attempts_total",
		"kueue_wait_time_refresh_duration_seconds",
		"kueue_wait_time_estimates_published_timestamp_seconds",
		"kueue_cluster_queue_effective_servers",
	} {
		if !strings.Contains(body, "\n"+series) {
			t.Errorf("the scrape lacks %s", series)
		}
	}

	stranger, err := cl.ServiceAccountToken(ctx, ns, "stranger")
	if err != nil {
		t.Fatal(err)
	}
	if status, b, err := manager.Scrape(ctx, stranger); err != nil || status != http.StatusForbidden {
		t.Errorf("a token without the binding: status %d (%v), want 403; body %.200q", status, err, b)
	}
	if status, b, err := manager.Scrape(ctx, ""); err != nil || status != http.StatusUnauthorized {
		t.Errorf("no token: status %d (%v), want 401; body %.200q", status, err, b)
	}
}

type statusError struct {
	status int
	body   string
}

func (e statusError) Error() string {
	return http.StatusText(e.status) + ": " + strings.TrimSpace(e.body)
}

func errorStatus(status int, body string) error {
	if len(body) > 300 {
		body = body[:300]
	}
	return statusError{status, body}
}
