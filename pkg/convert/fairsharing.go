package convert

import (
	corev1 "k8s.io/api/core/v1"
)

// WeightedUsage is a LocalQueue's admission fair sharing usage before its
// weight, Σ_r w_r·(C_r + P_r), from its ledger entry's consumed resources
// C and pending entry penalties P (Kueue's afs.UsageLedgerEntry): each
// resource name's quantity in its own units (cpu in cores, memory in
// bytes), as Kueue's admissionfairsharing.CalculateUsage counts it, times
// its weight in weights (1 for a name not there). Kueue divides the sum by
// the LocalQueue's weight; forecast.LocalQueueUsage.Consumed is the sum
// before that division.
func WeightedUsage(consumed, penalty corev1.ResourceList, weights map[string]float64) float64 {
	var sum float64
	for _, list := range []corev1.ResourceList{consumed, penalty} {
		for name, q := range list {
			w, ok := weights[string(name)]
			if !ok {
				w = 1
			}
			sum += w * q.AsApproximateFloat64()
		}
	}
	return sum
}
