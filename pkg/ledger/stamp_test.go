package ledger

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

func TestStampOfTakesTheBaselinesTheModelHas(t *testing.T) {
	at := time.Unix(1000, 5)
	nan := math.NaN()
	cases := map[string]struct {
		model  engine.APriori
		ema    time.Duration
		hasEMA bool
		want   Stamp[string]
	}{
		"no baseline": {
			want: Stamp[string]{ClusterQueue: "cq", At: at.UnixNano(), Method: engine.MethodForecast, EMA: nan, Paper: nan, Whitt: nan},
		},
		"an EMA, rates of an unstable queue": {
			model: engine.APriori{HasRates: true, MeanWait: time.Hour}, ema: time.Minute, hasEMA: true,
			want: Stamp[string]{ClusterQueue: "cq", At: at.UnixNano(), Method: engine.MethodForecast, EMA: 60, Paper: nan, Whitt: nan},
		},
		"a stable queue": {
			model: engine.APriori{HasRates: true, Stable: true, MeanWait: time.Minute, WhittMeanWait: 2 * time.Minute},
			want:  Stamp[string]{ClusterQueue: "cq", At: at.UnixNano(), Method: engine.MethodForecast, EMA: nan, Paper: 60, Whitt: 120},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := StampOf("cq", at, engine.MethodForecast, engine.Calibration{}, &tc.model, tc.ema, tc.hasEMA)
			if diff := cmp.Diff(tc.want, *got, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("stamp (-want +got):\n%s", diff)
			}
		})
	}
}
