package accuracy

// Batches assigns n time-ordered items to contiguous batches of near-equal
// size and returns the batch index of each item, for Sample.Batch: item i
// (0-based, in time order) goes to batch out[i] ∈ [0, B), with
// B = min(want, n) batches. With n = q·B + r (0 ≤ r < B) the first r batches
// hold q+1 items and the others q, so sizes differ by at most one and the
// indices are non-decreasing.
//
// Edge cases: n ≤ 0 gives an empty slice; want ≤ 0 is taken as 1 (one batch,
// every index 0); want > n gives n batches of one item.
func Batches(n, want int) []int {
	if n <= 0 {
		return []int{}
	}
	count := min(max(want, 1), n)
	size, rest := n/count, n%count
	// The first rest batches have size+1 items and end at item
	// boundary = rest·(size+1).
	boundary := rest * (size + 1)
	out := make([]int, n)
	for i := range out {
		if i < boundary {
			out[i] = i / (size + 1)
		} else {
			out[i] = rest + (i-boundary)/size
		}
	}
	return out
}
