package queuestats

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
)

// t0 is the fake clock's start.
var t0 = time.Unix(1_700_000_000, 0)

func validConfig() config {
	return config{
		Clock:             testingclock.NewFakeClock(t0),
		Rand:              rand.New(rand.NewPCG(1, 2)),
		HalfLife:          stats.DefaultHalfLife,
		ServiceSampleSize: stats.DefaultReservoirCapacity,
		MinServiceSamples: 10,
		EMAAlpha:          stats.DefaultEMAAlpha,
	}
}

func TestNewConfigValidatesOnce(t *testing.T) {
	cases := map[string]struct {
		change  func(*config)
		wantErr bool
	}{
		"the defaults": {
			change: func(*config) {},
		},
		"nil clock": {
			change:  func(c *config) { c.Clock = nil },
			wantErr: true,
		},
		"nil random source": {
			change:  func(c *config) { c.Rand = nil },
			wantErr: true,
		},
		"negative half-life": {
			change:  func(c *config) { c.HalfLife = -time.Minute },
			wantErr: true,
		},
		"negative service sample size": {
			change:  func(c *config) { c.ServiceSampleSize = -1 },
			wantErr: true,
		},
		"EMA alpha of zero": {
			change:  func(c *config) { c.EMAAlpha = 0 },
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := validConfig()
			tc.change(&c)
			_, err := newConfig(c)
			if diff := cmp.Diff(tc.wantErr, err != nil); diff != "" {
				t.Errorf("newConfig error %v (-want +got):\n%s", err, diff)
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
			s, err := validConfig().newQueue()
			if err != nil {
				t.Fatal(err)
			}
			if tc.failPriority {
				s.newPriority = func() (*Priority, error) { return nil, broken }
			}
			if tc.failService {
				s.newPriorityService = func() (*stats.ServiceTimes, error) { return nil, broken }
			}
			makePriority := s.newPriority
			s.newPriority = func() (*Priority, error) {
				ps, err := makePriority()
				if ps != nil && tc.failShape {
					ps.newShapeRate = func() (*stats.EventRate, error) { return nil, broken }
				}
				return ps, err
			}
			s.ObserveArrival(at, 1)
			s.ObserveAdmittedShape(at, 1, "cpu=1", capacity.Workload{})
			s.ObserveService(1, "", at, 30)
			ps := s.byPriority[1]
			type tracked struct {
				Services          int
				Priority, Service bool
				Shapes            int
			}
			got := tracked{Services: s.Service.Len(), Priority: ps != nil}
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

// Three small admissions for every large one split the priority's arrival
// rate three to one; a shape counts only for its own priority.
func TestShapeArrivalsSplitAPrioritysArrivalRateByItsAdmissions(t *testing.T) {
	clock := testingclock.NewFakeClock(t0)
	c := validConfig()
	c.Clock = clock
	s, err := c.newQueue()
	if err != nil {
		t.Fatal(err)
	}
	small := capacity.Workload{PodSets: []capacity.PodSet{{Name: "main", Count: 1, Requests: map[string]int64{"cpu": 500}}}}
	large := capacity.Workload{PodSets: []capacity.PodSet{{Name: "main", Count: 1, Requests: map[string]int64{"cpu": 2000}}}}
	for i := range 80 {
		clock.Step(5 * time.Second)
		now := clock.Now()
		s.ObserveArrival(now, 0)
		if i%4 == 3 {
			s.ObserveAdmittedShape(now, 0, "large", large)
		} else {
			s.ObserveAdmittedShape(now, 0, "small", small)
		}
	}
	s.ObserveArrival(clock.Now(), 7)
	s.ObserveArrival(clock.Now(), 7)
	v := s.View()
	rate := v.PriorityRates[0]
	if !(rate > 0) {
		t.Fatalf("no arrival rate for priority 0: %v", v.PriorityRates)
	}
	got := map[int64]float64{}
	for _, a := range v.ShapeArrivals {
		if a.Priority != 0 || a.WindowSeconds != v.PriorityWindows[0] {
			t.Errorf("shape arrival %+v: want priority 0 over its window %v", a, v.PriorityWindows[0])
		}
		got[a.Demand.PodSets[0].Requests["cpu"]] = a.RatePerSecond / rate
	}
	want := map[int64]float64{500: 0.75, 2000: 0.25}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 0.05)); diff != "" {
		t.Errorf("shares of the arrival rate by CPU per pod (-want,+got):\n%s", diff)
	}
}

// Shapes beyond maxShapesPerPriority are not tracked.
func TestAdmittedShapesOfAPriorityAreBounded(t *testing.T) {
	clock := testingclock.NewFakeClock(t0)
	c := validConfig()
	c.Clock = clock
	s, err := c.newQueue()
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxShapesPerPriority + 3 {
		clock.Step(time.Second)
		w := capacity.Workload{PodSets: []capacity.PodSet{{Name: "main", Count: 1, Requests: map[string]int64{"cpu": int64(100 * (i + 1))}}}}
		s.ObserveAdmittedShape(clock.Now(), 0, string(rune('a'+i)), w)
	}
	if n := len(s.byPriority[0].shapes); n != maxShapesPerPriority {
		t.Errorf("%d shapes tracked, want %d", n, maxShapesPerPriority)
	}
}
