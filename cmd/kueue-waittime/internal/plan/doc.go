// Package plan implements `kueue-waittime plan`: the paper's a-priori
// queue model for every ClusterQueue of a cluster described by real Kueue
// manifests (ResourceFlavor, Cohort, ClusterQueue, as `kubectl get -o yaml`
// exports them) and a WorkloadClasses document that says what runs there.
//
// The manifests go through Kueue's own scheduler cache and snapshot (built
// in memory, with no API server), so nominal quotas, cohort borrowing and
// borrowing/lending limits mean exactly what they mean to Kueue's scheduler
// (QuotaFor, PotentialAvailable). Per ClusterQueue the plan gives the
// Quotable/Unfeasible partition of the classes (paper Def. 3), k_eff per
// class (Eq. 3) and for the arrival-weighted mix (Eq. 4), the utilization
// ρ_eff, stability, and the Approximation 1 and Whitt waits of the queue
// and of every priority level (ρ_p over the classes of priority ≥ p).
package plan
