package estimates

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestFeaturesNamesEachFeatureInUseWithItsCoverage(t *testing.T) {
	type named struct {
		Name     FeatureName
		Coverage Coverage
	}
	cases := map[string]struct {
		use          FeatureUse
		want         []named
		wantOrdering Ordering
	}{
		"a ClusterQueue alone, nothing in use": {},
		"preemption within the ClusterQueue is modelled": {
			use:  FeatureUse{PreemptsWithinClusterQueue: true},
			want: []named{{FeaturePreemption, Modelled}},
		},
		"cohort policies count only in a cohort": {
			use: FeatureUse{NestedCohort: true, ReclaimsWithinCohort: true, BorrowsWithinCohort: true, FairSharing: true},
		},
		"a nested cohort with every cohort policy and fair sharing": {
			use:          FeatureUse{InCohort: true, NestedCohort: true, ReclaimsWithinCohort: true, BorrowsWithinCohort: true, FairSharing: true},
			wantOrdering: OrderingFairSharing,
			want: []named{
				{FeatureCohortBorrowing, Approximated},
				{FeatureHierarchicalCohorts, Approximated},
				{FeatureReclaimWithinCohort, Approximated},
				{FeatureBorrowWithinCohort, NotModelled},
				{FeatureFairSharing, NotModelled},
			},
		},
		"topology, admission fair sharing, admission checks and waitForPodsReady": {
			use:          FeatureUse{TopologyAwareScheduling: true, AdmissionFairSharing: true, AdmissionChecks: true, WaitForPodsReady: true},
			wantOrdering: OrderingAdmissionFairSharing,
			want: []named{
				{FeatureAdmissionFairSharing, NotModelled},
				{FeatureTopologyAwareScheduling, Approximated},
				{FeatureAdmissionChecks, NotModelled},
				{FeatureWaitForPodsReady, NotModelled},
			},
		},
		// Admission fair sharing given to the roll: its ordering is
		// modelled, unless the ClusterQueue preempts within (the roll then
		// orders by priority); fair sharing between the cohort's
		// ClusterQueues is not.
		"admission fair sharing rolled": {
			use:  FeatureUse{AdmissionFairSharing: true, AdmissionFairSharingRolled: true},
			want: []named{{FeatureAdmissionFairSharing, Approximated}},
		},
		"admission fair sharing rolled, preempting": {
			use:          FeatureUse{AdmissionFairSharing: true, AdmissionFairSharingRolled: true, PreemptsWithinClusterQueue: true},
			want:         []named{{FeaturePreemption, Modelled}, {FeatureAdmissionFairSharing, NotModelled}},
			wantOrdering: OrderingAdmissionFairSharing,
		},
		"admission fair sharing rolled, fair sharing in a cohort": {
			use:          FeatureUse{AdmissionFairSharing: true, AdmissionFairSharingRolled: true, InCohort: true, FairSharing: true},
			want:         []named{{FeatureCohortBorrowing, Approximated}, {FeatureFairSharing, NotModelled}, {FeatureAdmissionFairSharing, Approximated}},
			wantOrdering: OrderingFairSharing,
		},
		"admission fair sharing rolled but off": {
			use: FeatureUse{AdmissionFairSharingRolled: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Features(tc.use)
			var gotNamed []named
			for _, f := range got {
				if f.Note == "" {
					t.Errorf("%s has no note", f.Name)
				}
				gotNamed = append(gotNamed, named{f.Name, f.Coverage})
			}
			if diff := cmp.Diff(tc.want, gotNamed, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Features(%+v) (-want +got):\n%s", tc.use, diff)
			}
			if got := tc.use.UnmodelledOrdering(); got != tc.wantOrdering {
				t.Errorf("UnmodelledOrdering of %+v = %q, want %q", tc.use, got, tc.wantOrdering)
			}
		})
	}
}
