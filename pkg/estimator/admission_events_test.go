package estimator

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"
)

// admittedCopy returns wl with quota reserved in cq.
func admittedCopy(wl *kueue.Workload) *kueue.Workload {
	out := wl.DeepCopy()
	out.Status.Admission = utiltestingapi.MakeAdmission("cq").Obj()
	return out
}

// A replica that does not schedule (no ObserveAdmission call) records the
// admissions it sees in the Workload informer's updates: the same score,
// the same EMA of waits, the same admission count as the scheduling one.
func TestReplicaWithoutSchedulerRecordsAdmissionsFromInformerUpdates(t *testing.T) {
	type outcome struct {
		Scores     int
		Unscored   []string
		Admissions uint64
		EMA        float64
	}
	run := func(t *testing.T, viaScheduler bool) outcome {
		objs := paperObjects()
		objs.pending = objs.pending[:2]
		env, rep, e := warmRecordingEstimator(t, objs)
		h := e.WorkloadEventHandler()
		p0, p1 := objs.pending[0], objs.pending[1]
		h.OnAdd(p0, false)
		env.clock.Step(time.Second)
		e.Refresh(env.ctx)
		h.OnAdd(p1, false) // arrives after the refresh: no estimate

		env.clock.Step(2 * time.Second)
		for _, p := range []*kueue.Workload{p0, p1} {
			if viaScheduler {
				e.ObserveAdmission(admittedCopy(p), env.clock.Now())
			} else {
				h.OnUpdate(p, admittedCopy(p))
			}
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		s := e.statsFor("cq")
		ema, _ := s.Waits.Value()
		return outcome{Scores: len(rep.scores), Unscored: rep.unscored, Admissions: s.Admissions.Count(), EMA: ema}
	}
	leader, follower := run(t, true), run(t, false)
	want := outcome{Scores: 1, Unscored: []string{"cq AdmittedBeforeEstimate"}, Admissions: 2}
	want.EMA = leader.EMA
	if diff := cmp.Diff(want, leader); diff != "" {
		t.Errorf("scheduling replica (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(leader, follower); diff != "" {
		t.Errorf("replica without scheduler vs scheduling replica (-scheduling,+without):\n%s", diff)
	}
}

// On the scheduling replica the scheduler's call and the informer's update
// describe one admission: whichever comes first is recorded, once.
func TestAdmissionSeenTwiceIsRecordedOnce(t *testing.T) {
	for name, schedulerFirst := range map[string]bool{"scheduler first": true, "informer first": false} {
		t.Run(name, func(t *testing.T) {
			objs := paperObjects()
			env, rep, e := warmRecordingEstimator(t, objs)
			h := e.WorkloadEventHandler()
			p0 := objs.pending[0]
			h.OnAdd(p0, false)
			env.clock.Step(time.Second)
			e.Refresh(env.ctx)
			env.clock.Step(time.Second)
			if schedulerFirst {
				e.ObserveAdmission(admittedCopy(p0), env.clock.Now())
				h.OnUpdate(p0, admittedCopy(p0))
			} else {
				h.OnUpdate(p0, admittedCopy(p0))
				e.ObserveAdmission(admittedCopy(p0), env.clock.Now())
			}
			e.mu.Lock()
			admissions := e.statsFor("cq").Admissions.Count()
			e.mu.Unlock()
			if len(rep.scores) != 1 || len(rep.unscored) != 0 || admissions != 1 {
				t.Errorf("scores %d, unscored %v, admissions counted %d; want 1, none, 1", len(rep.scores), rep.unscored, admissions)
			}
		})
	}
}

// A workload whose quota was released without finishing (evicted,
// deactivated) and that is admitted again is a new admission.
func TestAdmissionAfterReleasedQuotaIsRecordedAgain(t *testing.T) {
	objs := paperObjects()
	env := newTestEnv(t, objs)
	e := env.estimator(t, WithPriorMeanService(20*time.Second))
	e.markWarmed()
	h := e.WorkloadEventHandler()
	p0 := objs.pending[0]
	admitted := admittedCopy(p0)
	h.OnUpdate(p0, admitted)
	env.clock.Step(time.Second)
	released := admitted.DeepCopy()
	released.Status.Admission = nil
	h.OnUpdate(admitted, released)
	env.clock.Step(time.Second)
	h.OnUpdate(released, admittedCopy(p0))
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := e.statsFor("cq").Admissions.Count(); n != 2 {
		t.Errorf("admissions counted = %d, want 2", n)
	}
	if _, ok := e.state.Stats.AdmittedAt[workload.Key(p0)]; !ok {
		t.Error("the second admission is not recorded")
	}
}

// An admission seen before the warm start waits for it and is then
// recorded, once; racing the warm start it is never read half-written
// (go test -race).
func TestAdmissionBeforeWarmStartIsReplayedOnce(t *testing.T) {
	objs := paperObjects()
	env := newTestEnv(t, objs)
	e := env.estimator(t, WithPriorMeanService(20*time.Second))
	h := e.WorkloadEventHandler()
	p0, p1 := objs.pending[0], objs.pending[1]
	h.OnUpdate(p0, admittedCopy(p0)) // before the warm start: kept
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.markWarmed()
	}()
	h.OnUpdate(p1, admittedCopy(p1)) // kept or applied, racing the warm start
	<-done
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := e.statsFor("cq").Admissions.Count(); n != 2 {
		t.Errorf("admissions counted = %d, want 2", n)
	}
}

// The scheduling replica and one that only watches count a running
// workload as admitted from the same moment, the informer's sighting,
// though the scheduler reported the admission earlier.
func TestRunningWorkloadsAgeFromTheInformersSightingOnEveryReplica(t *testing.T) {
	const writeDelay = 800 * time.Millisecond
	cases := map[string]struct {
		schedules      bool
		schedulerFirst bool
	}{
		"scheduling replica, the scheduler first": {schedules: true, schedulerFirst: true},
		"scheduling replica, the informer first":  {schedules: true},
		"replica that only watches":               {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := paperObjects()
			env, _, e := warmRecordingEstimator(t, objs)
			h := e.WorkloadEventHandler()
			p0 := objs.pending[0]
			h.OnAdd(p0, false)
			env.clock.Step(time.Second)
			decided := env.clock.Now()
			informed := decided.Add(writeDelay)
			switch {
			case tc.schedules && tc.schedulerFirst:
				e.ObserveAdmission(admittedCopy(p0), decided)
				env.clock.SetTime(informed)
				h.OnUpdate(p0, admittedCopy(p0))
			case tc.schedules:
				env.clock.SetTime(informed)
				h.OnUpdate(p0, admittedCopy(p0))
				e.ObserveAdmission(admittedCopy(p0), decided)
			default:
				env.clock.SetTime(informed)
				h.OnUpdate(p0, admittedCopy(p0))
			}
			e.mu.Lock()
			at, ok := e.state.Stats.AdmittedAt[workload.Key(p0)]
			e.mu.Unlock()
			if !ok || !eventTime(at).time().Equal(informed) {
				t.Errorf("counted as admitted from %v (recorded %v), want the informer's sighting %v", eventTime(at).time(), ok, informed)
			}
		})
	}
}
