package plan

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

func TestArrivalSCV(t *testing.T) {
	cases := map[string]struct {
		classes []Class
		want    float64
	}{
		"one poisson stream": {
			classes: []Class{{ArrivalRate: 2, ArrivalSCV: 1}},
			want:    1,
		},
		"rate weighted": {
			// (1·4 + 3·0)/4 = 1.
			classes: []Class{{ArrivalRate: 1, ArrivalSCV: 4}, {ArrivalRate: 3, ArrivalSCV: 0}},
			want:    1,
		},
		"idle classes weigh equally": {
			classes: []Class{{ArrivalSCV: 4}, {ArrivalSCV: 1}},
			want:    2.5,
		},
		"an idle class carries no weight": {
			classes: []Class{{ArrivalRate: 1, ArrivalSCV: 0.25}, {ArrivalSCV: 9}},
			want:    0.25,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := arrivalSCV(tc.classes); math.Abs(got-tc.want) > 1e-15 {
				t.Errorf("arrivalSCV = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDecodeClasses(t *testing.T) {
	const doc = `{"apiVersion": "kueue-waittime.x-k8s.io/v1alpha1", "kind": "WorkloadClasses",
	  "metadata": {"name": "mine"},
	  "classes": [
	    {"name": "a", "clusterQueue": "q", "priority": -3,
	     "podSets": [{"requests": {"cpu": 2, "memory": "1Gi"}}, {"name": "w", "count": 3, "requests": {"example.com/gpu": "1"}}],
	     "arrivalsPerHour": 36, "meanService": "1m30s", "serviceCV": 2},
	    {"name": "b", "clusterQueue": "q", "podSets": [{"requests": {"cpu": "250m"}}], "arrivalRate": 0.5, "meanService": "5s", "arrivalCV": 0}
	  ]}`
	got, err := decodeClasses([]byte(doc), "doc")
	if err != nil {
		t.Fatal(err)
	}
	want := []Class{
		{
			Name: "a", ClusterQueue: "q", Priority: -3,
			Workload: capacity.Workload{PodSets: []capacity.PodSet{
				{Name: "ps0", Count: 1, Requests: map[string]int64{"cpu": 2000, "memory": 1 << 30}},
				{Name: "w", Count: 3, Requests: map[string]int64{"example.com/gpu": 1}},
			}},
			ArrivalRate: 0.01, MeanService: 90, ServiceSCV: 4, ArrivalSCV: 1,
		},
		{
			Name: "b", ClusterQueue: "q",
			Workload:    capacity.Workload{PodSets: []capacity.PodSet{{Name: "ps0", Count: 1, Requests: map[string]int64{"cpu": 250}}}},
			ArrivalRate: 0.5, MeanService: 5, ServiceSCV: 1, ArrivalSCV: 0,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	_, err = decodeClasses([]byte(strings.Replace(doc, `"cpu": 2,`, `"cpu": true,`, 1)), "doc")
	if err == nil || !strings.Contains(err.Error(), "want a string or a number, got true") {
		t.Errorf("a boolean quantity gave %v", err)
	}
}
