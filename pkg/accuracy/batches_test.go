package accuracy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBatchesHandValues(t *testing.T) {
	tests := map[string]struct {
		n, want int
		out     []int
	}{
		// 10 = 3·3 + 1: the first batch takes the extra item.
		"10 into 3": {n: 10, want: 3, out: []int{0, 0, 0, 0, 1, 1, 1, 2, 2, 2}},
		"6 into 3":  {n: 6, want: 3, out: []int{0, 0, 1, 1, 2, 2}},
		// 11 = 4·2 + 3: sizes 3, 3, 3, 2.
		"11 into 4":               {n: 11, want: 4, out: []int{0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3}},
		"5 into 2":                {n: 5, want: 2, out: []int{0, 0, 0, 1, 1}},
		"more batches than items": {n: 3, want: 5, out: []int{0, 1, 2}},
		"one batch":               {n: 4, want: 1, out: []int{0, 0, 0, 0}},
		"want zero is one":        {n: 4, want: 0, out: []int{0, 0, 0, 0}},
		"negative want":           {n: 2, want: -3, out: []int{0, 0}},
		"no items":                {n: 0, want: 3, out: []int{}},
		"negative items":          {n: -1, want: 3, out: []int{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.out, Batches(tc.n, tc.want)); diff != "" {
				t.Errorf("Batches(%d, %d) (-want +got):\n%s", tc.n, tc.want, diff)
			}
		})
	}
}

func TestBatchesContiguousAndNearEqual(t *testing.T) {
	for n := 1; n <= 120; n++ {
		for want := 1; want <= 40; want++ {
			out := Batches(n, want)
			if len(out) != n {
				t.Fatalf("Batches(%d, %d) has %d items", n, want, len(out))
			}
			sizes := map[int]int{}
			for i, b := range out {
				if i > 0 && b != out[i-1] && b != out[i-1]+1 {
					t.Fatalf("Batches(%d, %d): index %d after %d, not contiguous", n, want, b, out[i-1])
				}
				sizes[b]++
			}
			if out[0] != 0 || len(sizes) != min(n, want) || out[n-1] != len(sizes)-1 {
				t.Fatalf("Batches(%d, %d) = %v: want indices 0…%d", n, want, out, min(n, want)-1)
			}
			lo, hi := n, 0
			for _, s := range sizes {
				lo, hi = min(lo, s), max(hi, s)
			}
			if hi-lo > 1 {
				t.Fatalf("Batches(%d, %d): sizes from %d to %d", n, want, lo, hi)
			}
		}
	}
}
