package runner

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/scenario"
)

func TestSimultaneousArrivals(t *testing.T) {
	arrival := func(name string, offset float64) scenario.Arrival {
		return scenario.Arrival{Name: name, Offset: offset}
	}
	cases := map[string]struct {
		arrivals []scenario.Arrival
		want     []string
	}{
		"a single arrival": {
			arrivals: []scenario.Arrival{arrival("a", 1)},
			want:     []string{"a"},
		},
		"a burst, then a later arrival": {
			arrivals: []scenario.Arrival{arrival("a", 1), arrival("b", 1), arrival("c", 1), arrival("d", 2)},
			want:     []string{"a", "b", "c"},
		},
		"arrivals at different moments are one at a time": {
			arrivals: []scenario.Arrival{arrival("a", 1), arrival("b", 1.5), arrival("c", 1.5)},
			want:     []string{"a"},
		},
		"the whole plan is one burst": {
			arrivals: []scenario.Arrival{arrival("a", 0), arrival("b", 0)},
			want:     []string{"a", "b"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, a := range simultaneousArrivals(tc.arrivals) {
				got = append(got, a.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("simultaneousArrivals (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBurstIsCreatedConcurrently: every create of a burst of four waits
// until all four have started, which only concurrent calls can satisfy.
func TestBurstIsCreatedConcurrently(t *testing.T) {
	burst := []scenario.Arrival{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}
	var started sync.WaitGroup
	started.Add(len(burst))
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	var created sync.Map
	err := createConcurrently(burst, len(burst), func(a scenario.Arrival) error {
		started.Done()
		select {
		case <-all:
		case <-time.After(10 * time.Second):
			return errors.New("the other creates of the burst did not start")
		}
		created.Store(a.Name, true)
		return nil
	})
	if err != nil {
		t.Fatalf("createConcurrently: %v", err)
	}
	for _, a := range burst {
		if _, ok := created.Load(a.Name); !ok {
			t.Errorf("%s was not created", a.Name)
		}
	}
}

func TestCreateConcurrentlyRespectsItsLimit(t *testing.T) {
	burst := make([]scenario.Arrival, 40)
	var running, most atomic.Int32
	err := createConcurrently(burst, 3, func(scenario.Arrival) error {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Millisecond)
		running.Add(-1)
		return nil
	})
	if err != nil {
		t.Fatalf("createConcurrently: %v", err)
	}
	if got := most.Load(); got > 3 || got < 1 {
		t.Errorf("at most %d creates ran at once, want 1–3", got)
	}
}

func TestCreateConcurrentlyReturnsAFailedCreate(t *testing.T) {
	burst := []scenario.Arrival{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	var calls atomic.Int32
	err := createConcurrently(burst, 2, func(a scenario.Arrival) error {
		calls.Add(1)
		if a.Name == "b" {
			return errors.New("creating workload b: the server refused it")
		}
		return nil
	})
	if err == nil || err.Error() != "creating workload b: the server refused it" {
		t.Errorf("createConcurrently returned %v, want b's error", err)
	}
	if got := calls.Load(); got != 3 {
		t.Errorf("%d creates were called, want all 3", got)
	}
}
