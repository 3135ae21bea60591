// Package capacity is the pure capacity model of one Kueue ClusterQueue: how
// much it can hold (resource groups × flavors × resources, nominal quota and
// borrowable amount), what a pending workload asks for, and the two questions
// the wait-time model asks of them:
//
//   - Partition (paper Def. 3, Thm 1): is the workload Quotable — for every
//     resource group it touches some flavor can hold its demand within the
//     potential capacity nominal + max borrowable — or Unfeasible, so that
//     no amount of waiting admits it without reconfiguration? See [Classify].
//   - Effective server count (paper §3.3, Eq. 3 and Eq. 4, and k_eff⁺ with
//     cohort borrowing): how many such workloads run at once. See [KEff] and
//     [KEffMix].
//
// All amounts are int64 in Kueue's canonical units (milli-units for cpu,
// bytes for memory, whole units otherwise) and [Unlimited] (math.MaxInt64)
// marks an unbounded quota, exactly like Kueue's resources.Amount. The
// package imports only the standard library; an adapter converts Kueue's
// ClusterQueueSnapshot (QuotaFor, PotentialAvailable) and workload.Info into
// [ClusterQueue] and [Workload].
//
// An adapter's workload, read in place as a [Demand], converts into a
// [Workload] ([DemandOf], or into reused values with a [Converter]), and
// [Classes] groups workloads by demand shape, converting only each
// class's first.
//
// An [Interner] hands out one shared copy of each distinct [Quantities]
// (the running workloads' usages a refresh converts are mostly copies of
// a few).
//
// Nothing here panics on bad input: a malformed ClusterQueue or Workload
// yields an error wrapping [ErrInvalidCapacity] or [ErrInvalidWorkload]
// (or an [Invalid] classification), and sums and products saturate at
// [Unlimited] instead of overflowing.
package capacity
