package dispatch

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var now = time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)

func quotable(p50, p90 time.Duration, age time.Duration) *Answer {
	return &Answer{P50: &p50, P90: &p90, At: now.Add(-age)}
}

func TestNominate(t *testing.T) {
	cases := map[string]struct {
		round   Round
		want    Decision
		wantErr bool
	}{
		"lowest P50 wins; a slower one past its P90 is left out": {
			round: Round{Workers: []Worker{
				{Name: "slow", Answer: quotable(90*time.Second, 200*time.Second, time.Second)},
				{Name: "fast", Answer: quotable(10*time.Second, 60*time.Second, time.Second)},
			}},
			want: Decision{Add: []string{"fast"}, Basis: BasisExpectedWait},
		},
		"a slower one whose P50 is within the best's P90 is added as a hedge": {
			round: Round{Workers: []Worker{
				{Name: "slow", Answer: quotable(90*time.Second, 200*time.Second, time.Second)},
				{Name: "fast", Answer: quotable(10*time.Second, 300*time.Second, time.Second)},
				{Name: "slowest", Answer: quotable(301*time.Second, 400*time.Second, time.Second)},
			}},
			want: Decision{Add: []string{"slow", "fast"}, Basis: BasisExpectedWait},
		},
		"a P50 equal to the best's P90 is within it": {
			round: Round{Workers: []Worker{
				{Name: "a", Answer: quotable(10*time.Second, 20*time.Second, time.Second)},
				{Name: "b", Answer: quotable(20*time.Second, 20*time.Second, time.Second)},
			}},
			want: Decision{Add: []string{"a", "b"}, Basis: BasisExpectedWait},
		},
		"equal P50 and P90: both, in the configured order": {
			round: Round{Workers: []Worker{
				{Name: "b", Answer: quotable(10*time.Second, 20*time.Second, time.Second)},
				{Name: "a", Answer: quotable(10*time.Second, 20*time.Second, time.Second)},
				{Name: "c", Answer: quotable(21*time.Second, 30*time.Second, time.Second)},
			}},
			want: Decision{Add: []string{"b", "a"}, Basis: BasisExpectedWait},
		},
		"an Immediate answer (no spread) hedges nothing": {
			round: Round{Workers: []Worker{
				{Name: "idle", Answer: quotable(0, 0, time.Second)},
				{Name: "busy", Answer: quotable(time.Second, 10*time.Second, time.Second)},
			}},
			want: Decision{Add: []string{"idle"}, Basis: BasisExpectedWait},
		},
		"an Unfeasible worker is never nominated, though it has no wait": {
			round: Round{Workers: []Worker{
				{Name: "small", Answer: &Answer{Unfeasible: true, At: now}},
				{Name: "big", Answer: quotable(time.Hour, 2*time.Hour, 0)},
			}},
			want: Decision{Add: []string{"big"}, Basis: BasisExpectedWait},
		},
		"only Unfeasible answers left: nothing": {
			round: Round{Workers: []Worker{
				{Name: "a", Answer: &Answer{Unfeasible: true, At: now}},
				{Name: "b", Answer: &Answer{Unfeasible: true, At: now}},
			}},
			want: Decision{Basis: BasisNone},
		},
		"an Unfeasible worker is not nominated as a silent one either": {
			round: Round{Workers: []Worker{
				{Name: "a", Answer: &Answer{Unfeasible: true, At: now}},
				{Name: "b"},
			}},
			want: Decision{Add: []string{"b"}, Basis: BasisIncremental},
		},
		"an answer older than the timeout does not rank, however short its wait": {
			round: Round{Workers: []Worker{
				{Name: "stale", Answer: quotable(0, time.Second, 6*time.Second)},
				{Name: "fresh", Answer: quotable(time.Minute, 2*time.Minute, 5*time.Second)},
			}},
			want: Decision{Add: []string{"fresh"}, Basis: BasisExpectedWait},
		},
		"an answer dated after now is fresh": {
			round: Round{Workers: []Worker{
				{Name: "ahead", Answer: quotable(time.Second, time.Second, -time.Minute)},
				{Name: "b", Answer: quotable(time.Minute, 2*time.Minute, 0)},
			}},
			want: Decision{Add: []string{"ahead"}, Basis: BasisExpectedWait},
		},
		"a silent worker is not nominated while an answered Quotable one is left": {
			round: Round{Workers: []Worker{
				{Name: "a"},
				{Name: "b", Answer: quotable(time.Hour, time.Hour, 0)},
			}},
			want: Decision{Add: []string{"b"}, Basis: BasisExpectedWait},
		},
		"no answers: the first step of workers by name, as Incremental": {
			round: Round{Workers: []Worker{{Name: "d"}, {Name: "b"}, {Name: "a"}, {Name: "c"}}},
			want:  Decision{Add: []string{"a", "b", "c"}, Basis: BasisIncremental},
		},
		"no answers, config order: the first step in the configured order": {
			round: Round{ConfigOrder: true, Workers: []Worker{{Name: "d"}, {Name: "b"}, {Name: "a"}, {Name: "c"}}},
			want:  Decision{Add: []string{"d", "b", "a"}, Basis: BasisIncremental},
		},
		"a stale answer is taken as no answer": {
			round: Round{StepSize: 1, Workers: []Worker{
				{Name: "b", Answer: quotable(0, 0, time.Minute)},
				{Name: "a", Answer: &Answer{Unfeasible: true, At: now}},
			}},
			want: Decision{Add: []string{"b"}, Basis: BasisIncremental},
		},
		"a stale Unfeasible answer is taken as no answer": {
			round: Round{Workers: []Worker{
				{Name: "a", Answer: &Answer{Unfeasible: true, At: now.Add(-time.Minute)}},
			}},
			want: Decision{Add: []string{"a"}, Basis: BasisIncremental},
		},
		"nominated workers are skipped: the next fastest": {
			round: Round{Nominated: []string{"fast"}, Workers: []Worker{
				{Name: "fast", Answer: quotable(time.Second, time.Second, 0)},
				{Name: "mid", Answer: quotable(time.Minute, time.Minute, 0)},
				{Name: "slow", Answer: quotable(time.Hour, time.Hour, 0)},
			}},
			want: Decision{Add: []string{"mid"}, Basis: BasisExpectedWait},
		},
		"nominated workers are skipped by the Incremental step too": {
			round: Round{Nominated: []string{"a", "b"}, Workers: []Worker{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}},
			want:  Decision{Add: []string{"c", "d"}, Basis: BasisIncremental},
		},
		"every worker nominated: nothing": {
			round: Round{Nominated: []string{"a"}, Workers: []Worker{{Name: "a"}}},
			want:  Decision{Basis: BasisNone},
		},
		"a Quotable answer without waits ranks after one with waits": {
			round: Round{Workers: []Worker{
				{Name: "unknown", Answer: &Answer{At: now}},
				{Name: "known", Answer: quotable(time.Hour, 2*time.Hour, 0)},
			}},
			want: Decision{Add: []string{"known"}, Basis: BasisExpectedWait},
		},
		"a Quotable answer without waits ranks before a silent worker": {
			round: Round{Workers: []Worker{{Name: "a"}, {Name: "unknown", Answer: &Answer{At: now}}}},
			want:  Decision{Add: []string{"unknown"}, Basis: BasisExpectedWait},
		},
		"a missing P90 ranks after a given one of equal P50, which sets the hedge's range": {
			// Were a the best, its unknown P90 would hedge nothing and a
			// would be added alone; b is, and a's P50 is within its P90.
			round: Round{Workers: []Worker{
				{Name: "a", Answer: &Answer{P50: new(time.Minute), At: now}},
				{Name: "b", Answer: quotable(time.Minute, time.Minute, 0)},
				{Name: "c", Answer: quotable(90*time.Second, 2*time.Minute, 0)},
			}},
			want: Decision{Add: []string{"a", "b"}, Basis: BasisExpectedWait},
		},
		"no workers: nothing": {
			round: Round{},
			want:  Decision{Basis: BasisNone},
		},
		"zero timeout": {
			round:   Round{Timeout: -1},
			wantErr: true,
		},
		"zero step size": {
			round:   Round{StepSize: -1},
			wantErr: true,
		},
		"a worker without a name": {
			round:   Round{Workers: []Worker{{}}},
			wantErr: true,
		},
		"a worker twice": {
			round:   Round{Workers: []Worker{{Name: "a"}, {Name: "a"}}},
			wantErr: true,
		},
		"a negative wait": {
			round:   Round{Workers: []Worker{{Name: "a", Answer: quotable(-time.Second, time.Second, 0)}}},
			wantErr: true,
		},
		"a P90 below the P50": {
			round:   Round{Workers: []Worker{{Name: "a", Answer: quotable(time.Minute, time.Second, 0)}}},
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := tc.round
			r.Now = now
			// Zero means the defaults of these cases; negative, zero.
			switch {
			case r.Timeout == 0:
				r.Timeout = 5 * time.Second
			case r.Timeout < 0:
				r.Timeout = 0
			}
			switch {
			case r.StepSize == 0:
				r.StepSize = 3
			case r.StepSize < 0:
				r.StepSize = 0
			}
			got, err := Nominate(r)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidRound) {
					t.Fatalf("Nominate() error = %v, want one wrapping ErrInvalidRound", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Nominate() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Nominate() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestAnswerValidate(t *testing.T) {
	cases := map[string]struct {
		answer  *Answer
		wantErr bool
	}{
		"waits in order":      {answer: quotable(time.Second, time.Minute, 0)},
		"equal waits":         {answer: quotable(time.Second, time.Second, 0)},
		"no waits":            {answer: &Answer{Unfeasible: true}},
		"only a P90":          {answer: &Answer{P90: new(time.Second)}},
		"a negative P50":      {answer: &Answer{P50: new(-time.Second)}, wantErr: true},
		"a negative P90":      {answer: &Answer{P90: new(-time.Second)}, wantErr: true},
		"a P90 below the P50": {answer: quotable(time.Minute, time.Second, 0), wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := tc.answer.Validate(); (err != nil) != tc.wantErr {
				t.Errorf("Validate() error = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}
