package positions

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeysJoinAndSplit(t *testing.T) {
	cases := map[string]struct {
		key  string
		want Name
	}{
		"namespace and name":  {key: "team-a/train-7", want: Name{Namespace: "team-a", Name: "train-7"}},
		"no slash":            {key: "no-slash", want: Name{Namespace: "no-slash"}},
		"a slash in the name": {key: "ns/a/b", want: Name{Namespace: "ns", Name: "a/b"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := NameOfKey(tc.key)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NameOfKey(%q) (-want,+got):\n%s", tc.key, diff)
			}
			if tc.want.Name != "" {
				if joined := string(AppendKey([]byte("x"), got)); joined != "x"+tc.key {
					t.Errorf("AppendKey appended %q, want %q", joined, "x"+tc.key)
				}
			}
		})
	}
}
