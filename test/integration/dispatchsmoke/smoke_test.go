// Package dispatchsmoke is a short run of the dispatch evaluation
// (test/dispatcheval) in the integration suites: a manager with the
// wait-time dispatcher and two workers of different capacity and load, a
// few seeded Jobs, each of which must be admitted on exactly one worker and
// finish.
package dispatchsmoke

import (
	"context"
	"fmt"
	"testing"
	"time"

	utilfeature "k8s.io/apiserver/pkg/util/feature"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/features"

	"github.com/kueue-waittime/kueue-waittime/test/dispatcheval"
)

func TestWaitTimeDispatcherAdmitsEachJobOnceOnOneWorker(t *testing.T) {
	if err := utilfeature.DefaultMutableFeatureGate.Set(fmt.Sprintf("%s=true", features.WaitTimeEstimation)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	scenario := dispatcheval.Scenario{
		Workers: []dispatcheval.Worker{
			{Name: "small", CPUMilli: 4000},
			{Name: "large", CPUMilli: 8000, BackgroundRate: 0.8, BackgroundCPUMilli: 1000, BackgroundMeanService: 4 * time.Second},
		},
		Jobs:        8,
		JobRate:     1,
		Warmup:      5 * time.Second,
		JobCPUMilli: []int64{1000, 2000},
		MeanService: 2 * time.Second,
		MinService:  time.Second,
		MaxService:  5 * time.Second,
	}
	plan, err := scenario.Draw(1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := dispatcheval.StartClusters(ctx, configapi.MultiKueueDispatcherModeWaitTime, []string{"small", "large"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the control planes: %v", err)
		}
	})
	res, _, err := c.Run(ctx, scenario, plan, "smoke", time.Minute, nil, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	admitted := 0
	for _, n := range res.AdmittedOn {
		admitted += n
	}
	if res.Stats.N != scenario.Jobs || admitted != scenario.Jobs || res.Unadmitted != 0 || res.Unfinished != 0 {
		t.Errorf("of %d Jobs: %d waits measured, %d admitted (%v), %d never admitted, %d unfinished", scenario.Jobs, res.Stats.N, admitted, res.AdmittedOn, res.Unadmitted, res.Unfinished)
	}
	if res.JobOnTwo != 0 {
		t.Errorf("%d Jobs were created on two workers", res.JobOnTwo)
	}
}
