package forecast

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// TestLentQuotaComesBackAsItsHoldersEnd checks hand-computed waits of a
// ClusterQueue whose quota other ClusterQueues' workloads hold. The
// deterministic law makes them exact: a holder of age a ends 10 − a from now.
func TestLentQuotaComesBackAsItsHoldersEnd(t *testing.T) {
	f := mustNew(t, WithSamples(8), WithHorizonSeconds(3600))
	one := []capacity.Quantities{cpu(1000)}
	pending := func(n int) []Pending {
		out := make([]Pending, n)
		for i := range out {
			out[i] = Pending{ID: string(rune('a' + i)), Options: one, Quotable: true}
		}
		return out
	}
	cases := map[string]struct {
		queue       Queue
		want        []float64
		wantClamped []bool
	}{
		// Both CPUs lent to two 1-CPU holders ending in 8 and 4 s: the
		// first two wait for them, the third for the first one's end.
		"two holders return the two lent CPUs": {
			queue: Queue{
				Capacity:    cpu(2000),
				Lent:        cpu(2000),
				LentHolders: []Running{{Usage: cpu(1000), AgeSeconds: 2}, {Usage: cpu(1000), AgeSeconds: 6}},
				Pending:     pending(3),
			},
			want:        []float64{4, 8, 14},
			wantClamped: []bool{false, false, false},
		},
		// One CPU lent, held by a 2-CPU workload ending in 3 s (its other
		// CPU is someone else's): it returns 1 CPU, not 2, and the second
		// pending waits for the own running workload, 10 s.
		"a holder returns no more than is lent": {
			queue: Queue{
				Capacity:    cpu(2000),
				Running:     []Running{{Usage: cpu(1000)}},
				Lent:        cpu(1000),
				LentHolders: []Running{{Usage: cpu(2000), AgeSeconds: 7}},
				Pending:     pending(2),
			},
			want:        []float64{3, 10},
			wantClamped: []bool{false, false},
		},
		// A reclaim by preemption: the caller bounds the holder at its
		// age plus the reclaim's delay, 0.5 s.
		"a reclaimed holder ends at its bound": {
			queue: Queue{
				Capacity:    cpu(1000),
				Lent:        cpu(1000),
				LentHolders: []Running{{Usage: cpu(1000), AgeSeconds: 2, MaxExecutionSeconds: 2.5}},
				Pending:     pending(1),
			},
			want:        []float64{0.5},
			wantClamped: []bool{false},
		},
		"lent quota without holders never comes back": {
			queue: Queue{
				Capacity: cpu(1000),
				Lent:     cpu(1000),
				Pending:  pending(1),
			},
			want:        []float64{3600},
			wantClamped: []bool{true},
		},
		"holders without lent quota are ignored": {
			queue: Queue{
				Capacity:    cpu(1000),
				Lent:        capacity.Quantities{{Flavor: "other", Resource: "cpu"}: 1000},
				LentHolders: []Running{{Usage: cpu(1000), AgeSeconds: 2}},
				Pending:     pending(2),
			},
			want:        []float64{0, 10},
			wantClamped: []bool{false, false},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := tc.queue
			q.Service = mustDeterministic(t, 10)
			est := mustForecast(t, f, q, 1)
			if diff := cmp.Diff(tc.want, waits(est), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("expected waits (-want +got):\n%s", diff)
			}
			var clamped []bool
			for _, e := range est {
				clamped = append(clamped, e.Clamped)
			}
			if diff := cmp.Diff(tc.wantClamped, clamped); diff != "" {
				t.Errorf("clamped (-want +got):\n%s", diff)
			}
		})
	}
}
