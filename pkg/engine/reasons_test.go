package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReasonsIndexEachReasonOnce(t *testing.T) {
	cases := map[string]struct {
		whys     []string
		want     []uint16
		wantList []string
	}{
		"none":            {},
		"one, twice":      {whys: []string{"a", "a"}, want: []uint16{1, 1}, wantList: []string{"a"}},
		"two interleaved": {whys: []string{"a", "b", "a", "b"}, want: []uint16{1, 2, 1, 2}, wantList: []string{"a", "b"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var r Reasons
			var got []uint16
			for _, why := range tc.whys {
				got = append(got, r.Index(why))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("indexes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantList, r.List); diff != "" {
				t.Errorf("list (-want +got):\n%s", diff)
			}
		})
	}
}
