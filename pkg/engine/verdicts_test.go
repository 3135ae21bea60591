package engine

import "testing"

// TestTopologyVerdictsAreSafeForConcurrentUse has the scheduler's hook and
// the event handlers write verdicts while a refresh reads them, as they do
// in the manager; under the race detector it proves the reads need no lock.
func TestTopologyVerdictsAreSafeForConcurrentUse(t *testing.T) {
	var v Verdicts[string]
	keys := []string{"ns/a", "ns/b", "ns/c", "ns/d"}
	done := make(chan struct{})
	for w := range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 500 {
				k := keys[(i+w)%len(keys)]
				if i%3 == 0 {
					v.Set(k, "")
				} else {
					v.Set(k, "topology: never")
				}
			}
		}()
	}
	for range 500 {
		idx := UnplaceableIndex[string]{Verdicts: v.Load()}
		for _, k := range keys {
			if why, ok := idx.Verdicts[k]; ok && why != "topology: never" {
				t.Fatalf("verdict of %s: %q", k, why)
			}
		}
	}
	<-done
	<-done
	for _, k := range keys {
		v.Set(k, "")
	}
	if got := v.Load(); len(got) != 0 {
		t.Errorf("verdicts after every key was cleared: %v", got)
	}
}
