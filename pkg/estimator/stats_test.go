package estimator

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
)

func validStatsConfig() statsConfig {
	return statsConfig{
		clock:             testingclock.NewFakeClock(time.Unix(1_700_000_000, 0)),
		rng:               rand.New(rand.NewPCG(1, 2)),
		halfLife:          DefaultStatisticsHalfLife,
		serviceSampleSize: DefaultServiceSampleSize,
		minServiceSamples: DefaultMinServiceSamples,
		emaAlpha:          DefaultEMAAlpha,
	}
}

func TestNewStatsConfigValidatesOnce(t *testing.T) {
	cases := map[string]struct {
		change  func(*statsConfig)
		wantErr bool
	}{
		"the defaults": {
			change: func(*statsConfig) {},
		},
		"nil clock": {
			change:  func(c *statsConfig) { c.clock = nil },
			wantErr: true,
		},
		"nil random source": {
			change:  func(c *statsConfig) { c.rng = nil },
			wantErr: true,
		},
		"negative half-life": {
			change:  func(c *statsConfig) { c.halfLife = -time.Minute },
			wantErr: true,
		},
		"negative service sample size": {
			change:  func(c *statsConfig) { c.serviceSampleSize = -1 },
			wantErr: true,
		},
		"EMA alpha of zero": {
			change:  func(c *statsConfig) { c.emaAlpha = 0 },
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := validStatsConfig()
			tc.change(&c)
			_, err := newStatsConfig(c)
			if diff := cmp.Diff(tc.wantErr, err != nil); diff != "" {
				t.Errorf("newStatsConfig error %v (-want +got):\n%s", err, diff)
			}
		})
	}
}

// TestStatisticsThatCannotBeMadeAreUntracked checks the defined answer of
// a priority's statistics, service sample or shape rate that could not be
// made (which a configuration New validated rules out): untracked, as
// beyond their bounds, and the ClusterQueue's own statistics still count.
func TestStatisticsThatCannotBeMadeAreUntracked(t *testing.T) {
	broken := errors.New("broken")
	at := time.Unix(1_700_000_100, 0)
	cases := map[string]struct {
		failPriority, failService, failShape bool
		wantPriority, wantService            bool
		wantShapes                           int
	}{
		"all made": {
			wantPriority: true, wantService: true, wantShapes: 1,
		},
		"a priority's statistics": {
			failPriority: true,
		},
		"a priority's service sample": {
			failService: true, wantPriority: true, wantShapes: 1,
		},
		"a shape's rate": {
			failShape: true, wantPriority: true, wantService: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := validStatsConfig().newQueueStats()
			if err != nil {
				t.Fatal(err)
			}
			if tc.failPriority {
				s.newPriority = func() (*priorityStats, error) { return nil, broken }
			}
			if tc.failService {
				s.newPriorityService = func() (*stats.ServiceTimes, error) { return nil, broken }
			}
			makePriority := s.newPriority
			s.newPriority = func() (*priorityStats, error) {
				ps, err := makePriority()
				if ps != nil && tc.failShape {
					ps.newShapeRate = func() (*stats.EventRate, error) { return nil, broken }
				}
				return ps, err
			}
			s.observeArrival(at, 1)
			s.observeAdmittedShape(at, 1, "cpu=1", capacity.Workload{})
			s.observeService(1, "", at, 30)
			ps := s.byPriority[1]
			type tracked struct {
				Services          int
				Priority, Service bool
				Shapes            int
			}
			got := tracked{Services: s.service.Len(), Priority: ps != nil}
			if ps != nil {
				got.Service, got.Shapes = ps.service != nil, len(ps.shapes)
			}
			want := tracked{Services: 1, Priority: tc.wantPriority, Service: tc.wantService, Shapes: tc.wantShapes}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("statistics (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatsInvariantPanicsOnlyOnAnError(t *testing.T) {
	cases := map[string]struct {
		err       error
		wantPanic bool
	}{
		"no error": {},
		"an error": {err: errors.New("broken"), wantPanic: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got any
			func() {
				defer func() { got = recover() }()
				statsInvariant(tc.err)
			}()
			if diff := cmp.Diff(tc.wantPanic, got != nil); diff != "" {
				t.Errorf("panic %v (-want +got):\n%s", got, diff)
			}
		})
	}
}
