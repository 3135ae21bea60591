package dispatch

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// FuzzNominate checks Nominate's invariants on rounds built from the fuzzer's
// bytes, four bytes a worker: whether it answered and how (none, Quotable,
// Unfeasible, Quotable without waits), its P50 and P90 in seconds, the
// answer's age in seconds, and whether it is nominated already.
func FuzzNominate(f *testing.F) {
	f.Add([]byte{1, 10, 20, 1, 1, 5, 50, 0, 2, 0, 0, 0, 0, 0, 0, 0}, uint8(5), uint8(3), false)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 1, 3, 3, 9}, uint8(2), uint8(1), true)
	f.Fuzz(func(t *testing.T, data []byte, timeoutSeconds, stepSize uint8, configOrder bool) {
		r := Round{
			Now:         now,
			Timeout:     time.Duration(timeoutSeconds%16+1) * time.Second,
			StepSize:    int(stepSize%4) + 1,
			ConfigOrder: configOrder,
		}
		for i := 0; i+4 <= len(data) && len(r.Workers) < 12; i += 4 {
			w := Worker{Name: fmt.Sprintf("w%d", len(r.Workers))}
			p50 := time.Duration(data[i+1]%64) * time.Second
			p90 := p50 + time.Duration(data[i+2]%64)*time.Second
			at := now.Add(-time.Duration(data[i+3]%32) * time.Second)
			switch data[i] % 4 {
			case 1:
				w.Answer = &Answer{P50: &p50, P90: &p90, At: at}
			case 2:
				w.Answer = &Answer{Unfeasible: true, At: at}
			case 3:
				w.Answer = &Answer{At: at}
			}
			if data[i+3]&0x80 != 0 {
				r.Nominated = append(r.Nominated, w.Name)
			}
			r.Workers = append(r.Workers, w)
		}
		d, err := Nominate(r)
		if err != nil {
			t.Fatalf("Nominate() error = %v on a valid round", err)
		}
		fresh := func(a *Answer) bool { return a != nil && now.Sub(a.At) <= r.Timeout }
		byName := map[string]Worker{}
		for _, w := range r.Workers {
			byName[w.Name] = w
		}
		for _, name := range d.Add {
			w, ok := byName[name]
			if !ok {
				t.Fatalf("added %q, not a worker", name)
			}
			if slices.Contains(r.Nominated, name) {
				t.Errorf("added %q, nominated already", name)
			}
			if fresh(w.Answer) && w.Answer.Unfeasible {
				t.Errorf("added %q, which answered Unfeasible in time", name)
			}
			switch d.Basis {
			case BasisExpectedWait:
				if !fresh(w.Answer) {
					t.Errorf("added %q for its wait, but its answer is not fresh", name)
				}
			case BasisIncremental:
				if fresh(w.Answer) {
					t.Errorf("added %q as a silent worker, but it answered in time", name)
				}
			}
		}
		if d.Basis == BasisIncremental && len(d.Add) > r.StepSize {
			t.Errorf("added %d silent workers, more than the step %d", len(d.Add), r.StepSize)
		}
		if (d.Basis == BasisNone) != (len(d.Add) == 0) {
			t.Errorf("basis %s with %d added", d.Basis, len(d.Add))
		}
		// No worker left out beats an added one: not a fresh Quotable
		// answer with a shorter wait, and none at all when the added ones
		// were silent.
		for _, w := range r.Workers {
			if slices.Contains(r.Nominated, w.Name) || slices.Contains(d.Add, w.Name) {
				continue
			}
			if !fresh(w.Answer) || w.Answer.Unfeasible {
				continue
			}
			if d.Basis != BasisExpectedWait {
				t.Fatalf("%q answered Quotable in time but the basis is %s", w.Name, d.Basis)
			}
			left := candidate{p50: orInfinity(w.Answer.P50), p90: orInfinity(w.Answer.P90)}
			for _, name := range d.Add {
				a := byName[name].Answer
				if compareWaits(left, candidate{p50: orInfinity(a.P50), p90: orInfinity(a.P90)}) <= 0 {
					t.Errorf("%q left out with waits (%v, %v), not longer than added %q's", w.Name, left.p50, left.p90, name)
				}
			}
		}
	})
}
