package predict

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
)

// TestPredictBorrowing checks predict's rule, the live queue model's: the
// figures are over the nominal k_eff and those over k_eff⁺ (nominal +
// --borrowable) go beside them. M/M/1 at ρ = 0.5, E[S] = 20 s: C = 0.5,
// W = 0.5·20/(1·0.5) = 20 s, P90 = 20·ln(5) s. M/M/2 at ρ = 0.25: a = 0.5,
// C = (0.125/0.75)/(1.5 + 0.125/0.75) = 0.1, W = 0.1·20/(2·0.75) = 4/3 s;
// the P90 is 0 since P(W > 0) = 0.1 ≤ 0.1 (up to rounding).
func TestPredictBorrowing(t *testing.T) {
	cpu := func(v int64) []cli.ResourceAmount { return []cli.ResourceAmount{{Name: "cpu", Value: v}} }
	lambda, rho := 0.025, 0.5
	oneServer := Load{Utilization: new(0.5), Stable: new(true), Waits: cli.Waits{
		ProbabilityOfWait: new(0.5), MeanWaitSeconds: new(20.0), WhittMeanWaitSeconds: new(20.0), P90WaitSeconds: new(64.37751649736401)}}
	twoServers := Load{Utilization: new(0.25), Stable: new(true), Waits: cli.Waits{
		ProbabilityOfWait: new(0.1), MeanWaitSeconds: new(4.0 / 3), WhittMeanWaitSeconds: new(4.0 / 3), P90WaitSeconds: new(0.0)}}
	cases := map[string]struct {
		in   Input
		want Result
	}{
		"no borrowable: the nominal model alone": {
			in: Input{Quota: cpu(20000), Demand: cpu(20000), ArrivalRate: &lambda, MeanService: 20, ServiceCV: 1, ArrivalCV: 1},
			want: Result{Admissibility: "Quotable", KEff: new(1), Bottleneck: "cpu", ArrivalRate: &lambda,
				Load: oneServer},
		},
		"borrowable: k_eff stays nominal, the figures with borrowing beside": {
			in: Input{Quota: cpu(20000), Borrowable: cpu(20000), Demand: cpu(20000), ArrivalRate: &lambda, MeanService: 20, ServiceCV: 1, ArrivalCV: 1},
			want: Result{Admissibility: "Quotable", KEff: new(1), KEffWithBorrowing: new(2), Bottleneck: "cpu", ArrivalRate: &lambda,
				Load: oneServer, WithBorrowing: &twoServers},
		},
		"a target utilization is over the nominal k_eff": {
			in: Input{Quota: cpu(20000), Borrowable: cpu(20000), Demand: cpu(20000), Utilization: &rho, MeanService: 20, ServiceCV: 1, ArrivalCV: 1},
			want: Result{Admissibility: "Quotable", KEff: new(1), KEffWithBorrowing: new(2), Bottleneck: "cpu", ArrivalRate: &lambda,
				Load: oneServer, WithBorrowing: &twoServers},
		},
		"quotable only by borrowing: an answer with borrowing, none nominal": {
			in: Input{Quota: cpu(2000), Borrowable: cpu(20000), Demand: cpu(20000), Utilization: &rho, MeanService: 20, ServiceCV: 1, ArrivalCV: 1},
			want: Result{Admissibility: "Quotable", KEff: new(0), KEffWithBorrowing: new(1), Bottleneck: "cpu", ArrivalRate: &lambda,
				WithBorrowing: &oneServer,
				Note:          "k_eff = 0: the nominal quota cannot hold one such workload, so the nominal model has no server; the workload can be admitted only by borrowing (see withBorrowing); --utilization is over k_eff with borrowing"},
		},
		"borrowable that adds no server: no figures with borrowing": {
			in: Input{Quota: cpu(20000), Borrowable: cpu(10000), Demand: cpu(20000), ArrivalRate: &lambda, MeanService: 20, ServiceCV: 1, ArrivalCV: 1},
			want: Result{Admissibility: "Quotable", KEff: new(1), Bottleneck: "cpu", ArrivalRate: &lambda,
				Load: oneServer},
		},
		"unfeasible even with borrowing: no figures": {
			in: Input{Quota: cpu(2000), Borrowable: cpu(4000), Demand: cpu(20000), Utilization: &rho, MeanService: 20, ServiceCV: 1, ArrivalCV: 1},
			want: Result{Admissibility: "Unfeasible", Reason: "flavor default: cpu 20 > potential 6 (nominal 2, borrowable 4)",
				KEff: new(0), Bottleneck: "cpu"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Predict(tc.in)
			if err != nil {
				t.Fatalf("Predict: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(1e-9, 1e-9)); diff != "" {
				t.Errorf("result (-want,+got):\n%s", diff)
			}
		})
	}
}
