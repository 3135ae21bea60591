package e2e

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	visibilityapi "sigs.k8s.io/kueue/apis/visibility/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/cluster"
)

// admissionInstants maps each pending workload to the instant its P50
// puts its admission at (estimatedAt + P50), in milliseconds since the
// epoch, and returns its P50.
func admissionInstants(s *visibilityapi.PendingWorkloadsSummary) (at, p50 map[string]float64) {
	at, p50 = map[string]float64{}, map[string]float64{}
	for _, item := range s.Items {
		est := item.WaitTimeEstimate
		if est == nil || est.P50WaitMilliseconds == nil || est.EstimatedAt == nil {
			continue
		}
		p50[item.Name] = float64(*est.P50WaitMilliseconds)
		at[item.Name] = float64(est.EstimatedAt.UnixMilli()) + p50[item.Name]
	}
	return at, p50
}

// TestFollowerServesEstimatesThatAgreeWithTheLeaders runs a second manager
// process, as a Deployment with two replicas does: it loses the leader
// election, so its scheduler never runs, yet its own visibility server
// serves estimates, and the admission instants its P50s give agree with
// the leader's within 10 % of the leader's P50, workload by workload, by
// the next refresh at the latest. The follower hears of an admission
// through its informer, after the leader's scheduler made it: in the
// refresh that falls between the two, the replicas roll different queues
// (on a loaded machine the gap reaches a second). Rounds are over a
// refresh period apart, so a disagreement in one round is logged, with the
// workloads only one replica lists as pending, and one that lasts two
// rounds in a row fails the test.
func TestFollowerServesEstimatesThatAgreeWithTheLeaders(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	follower, err := cl.AddManager(ctx, cluster.RestartAlways, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := follower.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if err := follower.WaitReady(ctx, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	const ns = "team-replicas"
	cpuTenant(ctx, t, ns, "4")
	user, _, _ := researcher(ctx, t, "dave", ns)
	token := pendingReaderToken(ctx, t)
	// The history and the queue have the same run time, so that the
	// forecast works from a sample that describes what runs.
	const runFor = 6 * time.Second
	submitAndFinish(ctx, t, user, ns, "history-", 12, runFor)
	const jobs = 16
	for i := range jobs {
		if err := user.Create(ctx, job("run-"+strconv.Itoa(i), ns, "1", 0, runFor)); err != nil {
			t.Fatal(err)
		}
	}

	// Compare the two replicas' answers, read back to back, a round a
	// second while the queue drains (jobs/4 run times on an idle machine):
	// until the leader, having listed the Jobs' workloads as pending,
	// lists none, or for at most drainBound on a loaded machine.
	var relErrs []float64
	var persistent []string
	roundsWithDisagreement, comparisons := 0, 0
	// lastRound holds the previous round's disagreements by workload.
	lastRound := map[string]string{}
	const drainBound = 3 * time.Minute
	listedPending := false
	for deadline := time.Now().Add(drainBound); time.Now().Before(deadline); {
		leaderSummary, err := pendingFrom(ctx, manager, token, ns)
		if err != nil {
			t.Fatalf("the leader: %v", err)
		}
		if len(leaderSummary.Items) > 0 {
			listedPending = true
		} else if listedPending {
			break // drained
		}
		followerSummary, err := pendingFrom(ctx, follower, token, ns)
		if err != nil {
			t.Fatalf("the follower: %v", err)
		}
		leaderAt, leaderP50 := admissionInstants(leaderSummary)
		followerAt, followerP50 := admissionInstants(followerSummary)
		thisRound := map[string]string{}
		for name, at := range leaderAt {
			fAt, ok := followerAt[name]
			if !ok || leaderP50[name] <= 0 {
				continue
			}
			tolerance := 0.10 * leaderP50[name]
			comparisons++
			if d := math.Abs(fAt - at); d > tolerance {
				thisRound[name] = fmt.Sprintf("%s: the leader's P50 %.0f ms at %s puts admission %.0f ms from the follower's (P50 %.0f ms at %s)",
					name, leaderP50[name], estimatedAt(leaderSummary, name), d, followerP50[name], estimatedAt(followerSummary, name))
			}
			relErrs = append(relErrs, math.Abs(fAt-at)/leaderP50[name])
		}
		if len(thisRound) > 0 {
			roundsWithDisagreement++
			t.Logf("a round with %d disagreements; pending only at the leader %v, only at the follower %v",
				len(thisRound), onlyIn(leaderSummary, followerSummary), onlyIn(followerSummary, leaderSummary))
		}
		for name, d := range thisRound {
			if before, ok := lastRound[name]; ok {
				persistent = append(persistent, before+", then "+d)
			} else {
				t.Logf("beyond 10 %% of the leader's P50 for one round: %s", d)
			}
		}
		lastRound = thisRound
		time.Sleep(time.Second)
	}
	if comparisons < 10 {
		t.Fatalf("only %d comparisons of leader and follower estimates, want at least 10", comparisons)
	}
	slices.Sort(relErrs)
	t.Logf("follower vs leader admission instant, relative to the leader's P50, over %d comparisons: median %.3f, max %.3f; %d rounds with a disagreement",
		comparisons, relErrs[len(relErrs)/2], relErrs[len(relErrs)-1], roundsWithDisagreement)
	for _, d := range persistent {
		t.Errorf("beyond 10 %% of the leader's P50 in two rounds in a row: %s", d)
	}
}

// onlyIn names the workloads a lists as pending and b does not.
func onlyIn(a, b *visibilityapi.PendingWorkloadsSummary) []string {
	inB := map[string]bool{}
	for _, item := range b.Items {
		inB[item.Name] = true
	}
	var out []string
	for _, item := range a.Items {
		if !inB[item.Name] {
			out = append(out, item.Name)
		}
	}
	return out
}

func estimatedAt(s *visibilityapi.PendingWorkloadsSummary, name string) string {
	for _, item := range s.Items {
		if item.Name == name && item.WaitTimeEstimate != nil && item.WaitTimeEstimate.EstimatedAt != nil {
			return item.WaitTimeEstimate.EstimatedAt.Format("15:04:05.000")
		}
	}
	return "-"
}
