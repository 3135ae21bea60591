package docs

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/app"
)

// The checkers must fail on drift, or the tests of the docs pass for the
// wrong reason: these cases are drift of each kind, and examples that are
// fine.

func TestParseShell(t *testing.T) {
	cases := map[string]struct {
		text     []string
		wantCmds []command
		wantDocs []heredoc
	}{
		"comments, quotes, variables and separators": {
			text: []string{
				`make eval EVAL_ARGS="-f test/eval/quick.yaml --out _output/x"   # a comment`,
				`X=1 make a b && bin/kueue-waittime score -f 'a b.txt' | head; echo "q\"uoted"`,
			},
			wantCmds: []command{
				{page: "p.md", line: 10, args: []string{"make", "eval", "EVAL_ARGS=-f test/eval/quick.yaml --out _output/x"}},
				{page: "p.md", line: 11, env: []string{"X=1"}, args: []string{"make", "a", "b"}},
				{page: "p.md", line: 11, args: []string{"bin/kueue-waittime", "score", "-f", "a b.txt"}},
				{page: "p.md", line: 11, args: []string{"head"}},
				{page: "p.md", line: 11, args: []string{"echo", `q"uoted`}},
			},
		},
		"continuation lines, redirections and placeholders": {
			text: []string{
				`kubectl -n ns patch deployment d \`,
				`  -p '[{"op":"replace"}]' 2>&1 >out.txt`,
				`bin/kueue-waittime dispatched -n <namespace> --local-queue <name>`,
			},
			wantCmds: []command{
				{page: "p.md", line: 10, args: []string{"kubectl", "-n", "ns", "patch", "deployment", "d", "-p", `[{"op":"replace"}]`}},
				{page: "p.md", line: 12, args: []string{"bin/kueue-waittime", "dispatched", "-n", "<namespace>", "--local-queue", "<name>"}},
			},
		},
		"here-document": {
			text: []string{
				`cat > job.yaml <<'YAML'`,
				`kind: Job`,
				`YAML`,
				`kubectl create -f job.yaml`,
			},
			wantCmds: []command{
				{page: "p.md", line: 10, args: []string{"cat"}},
				{page: "p.md", line: 13, args: []string{"kubectl", "create", "-f", "job.yaml"}},
			},
			wantDocs: []heredoc{{page: "p.md", line: 11, target: "job.yaml", delim: "YAML", body: "kind: Job\n"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmds, docs := parseShell(block{page: "p.md", line: 10, lang: "sh", text: tc.text})
			if diff := cmp.Diff(tc.wantCmds, cmds, cmp.AllowUnexported(command{})); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDocs, docs, cmp.AllowUnexported(heredoc{})); diff != "" {
				t.Errorf("here-documents (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseBlocks(t *testing.T) {
	page := "# T\n\n```sh\nmake a\n```\ntext\n~~~~yaml\nk: v\n```\n~~~~\n"
	got, err := parseBlocks("p.md", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	want := []block{
		{page: "p.md", line: 4, lang: "sh", text: []string{"make a"}},
		{page: "p.md", line: 8, lang: "yaml", text: []string{"k: v", "```"}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(block{})); diff != "" {
		t.Errorf("blocks (-want +got):\n%s", diff)
	}
	if _, err := parseBlocks("p.md", []byte("```sh\nmake a\n")); err == nil {
		t.Error("an unclosed block: no error")
	}
}

func TestCheckCommandLine(t *testing.T) {
	cases := map[string]struct {
		args    []string
		wantErr bool
	}{
		"a documented command":         {args: []string{"predict", "--quota", "cpu=2", "--demand", "cpu=1", "--utilization", "0.5", "--mean-service", "20s"}},
		"an unknown subcommand":        {args: []string{"predcit", "--quota", "cpu=2"}, wantErr: true},
		"an unknown flag":              {args: []string{"predict", "--no-such-flag", "1"}, wantErr: true},
		"a value of the wrong type":    {args: []string{"eval", "--seed", "seven"}, wantErr: true},
		"an argument where none goes":  {args: []string{"plan", "cluster.yaml"}, wantErr: true},
		"placeholders as flag values":  {args: []string{"dispatched", "-n", "<namespace>", "--local-queue=<name>"}},
		"an unknown placeholder flag":  {args: []string{"dispatched", "--queue", "<name>"}, wantErr: true},
		"an unknown placeholder short": {args: []string{"dispatched", "-q", "<name>"}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := checkCommandLine(app.NewRootCommand(), tc.args)
			if gotErr := err != nil; gotErr != tc.wantErr {
				t.Errorf("checkCommandLine(%q) = %v, want an error: %t", tc.args, err, tc.wantErr)
			}
		})
	}
}

func TestCheckYAML(t *testing.T) {
	s := docsScheme(t)
	cases := map[string]struct {
		doc         string
		wantKind    string
		wantErr     bool
		wantSkipped bool
	}{
		"a Configuration": {
			doc:      "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitTimeEstimation:\n  refreshPeriod: 1s\n",
			wantKind: "config.kueue.x-k8s.io/v1beta2, Kind=Configuration",
		},
		"a Configuration field the code does not have": {
			doc:      "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitTimeEstimation:\n  refreshPeriods: 1s\n",
			wantKind: "config.kueue.x-k8s.io/v1beta2, Kind=Configuration",
			wantErr:  true,
		},
		"a ClusterQueue field of the wrong type": {
			doc:      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nspec:\n  cohortName: [a]\n",
			wantKind: "kueue.x-k8s.io/v1beta2, Kind=ClusterQueue",
			wantErr:  true,
		},
		"a kind without a Go type": {
			doc:         "apiVersion: example.com/v1\nkind: Widget\n",
			wantKind:    "example.com/v1, Kind=Widget",
			wantSkipped: true,
		},
		"a scenario field the parser does not have": {
			doc:      "name: x\nclusterQueues: []\nlevel: [0.5]\n",
			wantKind: "eval scenario",
			wantErr:  true,
		},
		"an invalid scenario": {
			doc:      "name: x\nquota: {cpu: \"2\"}\ndemand: {cpu: 500m}\n",
			wantKind: "eval scenario",
			wantErr:  true,
		},
		"a fragment of a visibility answer": {
			doc:      `{"waitTimeEstimate": {"admissibility": "Quotable", "estimatedAt": "2026-11-22T06:00:32.000000Z"}}`,
			wantKind: "fragment of v1beta2.PendingWorkload",
		},
		"a fragment with a misspelt field": {
			doc:      "status:\n  queueStabel: true\n",
			wantKind: "fragment",
			wantErr:  true,
		},
		"a fragment of nothing the docs show": {
			doc:         "replicas: 2\n",
			wantSkipped: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kind, err := checkYAML(s, []byte(tc.doc))
			if diff := cmp.Diff(tc.wantKind, kind); diff != "" {
				t.Errorf("kind (-want +got):\n%s", diff)
			}
			skipped := errors.Is(err, errSkipped)
			if skipped != tc.wantSkipped || (err != nil && !skipped) != tc.wantErr {
				t.Errorf("checkYAML() = %v, want an error: %t, skipped: %t", err, tc.wantErr, tc.wantSkipped)
			}
		})
	}
}

func TestReadMakeDatabase(t *testing.T) {
	db := readMakeDatabase(t)
	for _, target := range []string{"test", "test-integration", "eval", "kubectl"} {
		if !db.targets[target] {
			t.Errorf("the make database has no target %q", target)
		}
	}
	for _, notTarget := range []string{"no-such-target", "ROOT", ".docs-test-no-such-goal"} {
		if db.targets[notTarget] {
			t.Errorf("the make database has a target %q", notTarget)
		}
	}
	if db.variables["K8S_VERSION"] == "" {
		t.Error("the make database has no K8S_VERSION")
	}
}
