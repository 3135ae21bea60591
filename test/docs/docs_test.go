package docs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/yaml"

	configv1beta2 "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibilityv1beta2 "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	kueuectl "sigs.k8s.io/kueue/cmd/kueuectl/app"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/app"
)

// The least number of examples of each kind the pages hold today: fewer
// means the extraction broke (or the docs lost examples), not that the
// docs are right.
const (
	minMakeCommands   = 41
	minWaittimeLines  = 16
	minKueuectlLines  = 4
	minYAMLDocuments  = 7
	minRepoReferences = 15
)

// makeDatabase is what `make -p` prints of the Makefile and its includes,
// without running a recipe: the targets and the variables it defines.
type makeDatabase struct {
	targets   map[string]bool
	variables map[string]string
	// text is the Makefiles' own text, for the variables they only read.
	text string
}

var (
	makeRuleRE     = regexp.MustCompile(`^([^#\s:=][^:=]*?)::?(\s|$)`)
	makeVariableRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*) :?= ?(.*)$`)
)

func readMakeDatabase(t *testing.T) makeDatabase {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed to read the Makefile's targets: %v", err)
	}
	// -p prints the database, -q runs no recipe, -r and -R leave out the
	// built-in rules and variables; the goal is one no Makefile defines.
	cmd := exec.Command("make", "-pqrR", "-f", "Makefile", ".docs-test-no-such-goal")
	cmd.Dir = repoRoot
	// A test run by make inherits its MAKEFLAGS (jobserver, -s, variables
	// of the command line); the database is the Makefile's alone.
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GNUMAKEFLAGS":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, _ := cmd.Output() // exits 1 or 2: the goal is never up to date
	db := makeDatabase{targets: map[string]bool{}, variables: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	inFiles, notTarget := false, false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "# Files":
			inFiles = true
		case strings.HasPrefix(line, "# Finished Make data base") || line == "# VPATH Search Paths":
			inFiles = false
		case line == "# Not a target:":
			notTarget = true
		case strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "#"):
		default:
			if m := makeVariableRE.FindStringSubmatch(line); m != nil && !inFiles {
				db.variables[m[1]] = m[2]
				continue
			}
			if m := makeRuleRE.FindStringSubmatch(line); m != nil && inFiles {
				if !notTarget {
					for _, target := range strings.Fields(m[1]) {
						db.targets[target] = true
					}
				}
				notTarget = false
			}
		}
	}
	if len(db.targets) == 0 || db.variables["ROOT"] == "" {
		t.Fatalf("make -p printed no targets or no ROOT variable; its output began:\n%.2000s", out)
	}
	// Read through os so that go test's cache sees the Makefiles.
	files, err := filepath.Glob(filepath.Join(repoRoot, "hack", "*.mk"))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, f := range append([]string{filepath.Join(repoRoot, "Makefile")}, files...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text.Write(data)
	}
	db.text = text.String()
	return db
}

// scriptsText is the text of hack/'s scripts, which read some of the
// variables the docs set on a make line.
func scriptsText(t *testing.T) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(repoRoot, "hack"))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sh") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(repoRoot, "hack", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		text.Write(data)
	}
	return text.String()
}

// isProgram reports whether a command's program is name, run from the
// repository (bin/name, bin/<version>/name) or from PATH.
func isProgram(c command, name string) bool {
	return path.Base(c.args[0]) == name
}

// TestMakeTargets checks that every make command of the docs names targets
// the Makefile (with hack/*.mk) defines, and that every variable set on the
// line, before or after make, is one the Makefiles or hack/'s scripts read.
func TestMakeTargets(t *testing.T) {
	db := readMakeDatabase(t)
	scripts := scriptsText(t)
	cmds, _ := shellBlocks(t)
	checked := 0
	for _, c := range cmds {
		if !isProgram(c, "make") {
			continue
		}
		checked++
		t.Run(c.name(), func(t *testing.T) {
			var targets []string
			vars := append([]string{}, c.env...)
			for _, a := range c.args[1:] {
				switch {
				case strings.HasPrefix(a, "-"):
				case assignmentRE.MatchString(a):
					vars = append(vars, a)
				default:
					targets = append(targets, a)
				}
			}
			if len(targets) == 0 {
				t.Errorf("%s: no target make without a target", c)
			}
			for _, target := range targets {
				if !db.targets[target] {
					t.Errorf("%s: the Makefile defines no target %q", c, target)
				}
			}
			for _, v := range vars {
				name := strings.SplitN(v, "=", 2)[0]
				re := regexp.MustCompile(`\b` + name + `\b`)
				if !re.MatchString(db.text) && !re.MatchString(scripts) {
					t.Errorf("%s: neither the Makefiles nor hack/'s scripts read %s", c, name)
				}
			}
		})
	}
	t.Logf("%d make commands checked", checked)
	if checked < minMakeCommands {
		t.Errorf("checked %d make commands, want at least %d: did the extraction break?", checked, minMakeCommands)
	}
}

// makeArgsRE finds the make variables a recipe passes to a kueue-waittime
// subcommand as its arguments, such as `bin/kueue-waittime eval
// $(EVAL_ARGS)`: the docs' values of them are command lines too.
var makeArgsRE = regexp.MustCompile(`bin/kueue-waittime ((?:[a-z][a-z-]* )+)\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// cliCase is a command line of a CLI the docs show: the words after the
// program's name.
type cliCase struct {
	name string
	line string
	args []string
}

// waittimeCases returns the docs' kueue-waittime command lines: those of
// sh blocks, and those make passes on from a variable set on a make line.
func waittimeCases(t *testing.T, cmds []command, db makeDatabase) []cliCase {
	t.Helper()
	viaMake := map[string][]string{}
	for _, m := range makeArgsRE.FindAllStringSubmatch(db.text, -1) {
		viaMake[m[2]] = strings.Fields(m[1])
	}
	if len(viaMake) == 0 {
		t.Fatalf("no recipe passes a variable to bin/kueue-waittime: did %v stop matching?", makeArgsRE)
	}
	var out []cliCase
	for _, c := range cmds {
		switch {
		case isProgram(c, "kueue-waittime"):
			out = append(out, cliCase{name: c.name(), line: c.String(), args: c.args[1:]})
		case isProgram(c, "make"):
			for _, a := range append(append([]string{}, c.env...), c.args[1:]...) {
				kv := strings.SplitN(a, "=", 2)
				sub, ok := viaMake[kv[0]]
				if !ok || len(kv) != 2 {
					continue
				}
				words, _ := splitWords(kv[1])
				if len(words) != 1 {
					t.Errorf("%s: %s is not one list of words", c.name(), kv[0])
					continue
				}
				out = append(out, cliCase{
					name: c.name() + "/" + kv[0],
					line: fmt.Sprintf("%s (bin/kueue-waittime %s %s)", c, strings.Join(sub, " "), kv[1]),
					args: append(append([]string{}, sub...), words[0]...),
				})
			}
		}
	}
	return out
}

// checkCommandLine parses args against a command tree as cobra would
// before running the command, and stops there: the subcommand must exist,
// every flag must be known with a value of its type, the positional
// arguments must be what the command accepts, and required flags and flag
// groups must be satisfied.
//
// A placeholder such as <name> cannot be parsed as a value of the flag's
// type: a flag whose value is one must exist, but is left out of the
// parse; a positional placeholder stays, as a stand-in word.
func checkCommandLine(root *cobra.Command, args []string) error {
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	var parse, placeholderFlags []string
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "-") && i+1 < len(args) && isPlaceholder(args[i+1]) && !strings.Contains(args[i], "=") {
			placeholderFlags = append(placeholderFlags, args[i])
			i++
			continue
		}
		if name, value, ok := strings.Cut(args[i], "="); ok && strings.HasPrefix(name, "-") && isPlaceholder(value) {
			placeholderFlags = append(placeholderFlags, name)
			continue
		}
		parse = append(parse, args[i])
	}
	cmd, rest, err := root.Find(parse)
	if err != nil {
		return err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	for _, f := range placeholderFlags {
		name := strings.TrimLeft(f, "-")
		known := cmd.Flags().Lookup(name) != nil
		if !strings.HasPrefix(f, "--") && len(name) == 1 {
			known = cmd.Flags().ShorthandLookup(name) != nil
		}
		if !known {
			return fmt.Errorf("%s: unknown flag: %s", cmd.CommandPath(), f)
		}
	}
	if cmd.DisableFlagParsing {
		return nil
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if err := cmd.ValidateFlagGroups(); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	return nil
}

// TestKueueWaittimeCommands parses every kueue-waittime command line of the
// docs (bin/kueue-waittime or kueue-waittime, and the arguments make
// passes on from EVAL_ARGS and the like) against the real command tree,
// in-process and without running a command.
func TestKueueWaittimeCommands(t *testing.T) {
	cmds, _ := shellBlocks(t)
	cases := waittimeCases(t, cmds, readMakeDatabase(t))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkCommandLine(app.NewRootCommand(), tc.args); err != nil {
				t.Errorf("%s: %v", tc.line, err)
			}
		})
	}
	t.Logf("%d kueue-waittime command lines checked", len(cases))
	if len(cases) < minWaittimeLines {
		t.Errorf("checked %d kueue-waittime command lines, want at least %d: did the extraction break?", len(cases), minWaittimeLines)
	}
}

// TestKueuectlCommands parses every kueuectl command line of the docs
// against the command tree of the patched tree's kueuectl (which has
// `create waittimereview`), in-process.
func TestKueuectlCommands(t *testing.T) {
	cmds, _ := shellBlocks(t)
	checked := 0
	for _, c := range cmds {
		if !isProgram(c, "kueuectl") {
			continue
		}
		checked++
		t.Run(c.name(), func(t *testing.T) {
			root := kueuectl.NewKueuectlCmd(kueuectl.KueuectlOptions{
				IOStreams: genericiooptions.NewTestIOStreamsDiscard(),
				Clock:     clock.RealClock{},
			})
			if err := checkCommandLine(root, c.args[1:]); err != nil {
				t.Errorf("%s: %v", c, err)
			}
		})
	}
	t.Logf("%d kueuectl command lines checked", checked)
	if checked < minKueuectlLines {
		t.Errorf("checked %d kueuectl command lines, want at least %d: did the extraction break?", checked, minKueuectlLines)
	}
}

// yamlDocument is one YAML document of the docs: of a yaml block, or of a
// here-document a sh block writes to a .yaml file.
type yamlDocument struct {
	name string
	data []byte
}

func yamlDocuments(t *testing.T) []yamlDocument {
	t.Helper()
	var out []yamlDocument
	add := func(page string, line int, text string) {
		// Split a stream at its --- lines, each document named by its
		// first line.
		start := line
		var cur []string
		flush := func() {
			if strings.TrimSpace(strings.Join(cur, "")) != "" {
				out = append(out, yamlDocument{name: fmt.Sprintf("%s:%d", page, start), data: []byte(strings.Join(cur, "\n") + "\n")})
			}
		}
		for i, l := range strings.Split(text, "\n") {
			if strings.TrimRight(l, " \t") == "---" {
				flush()
				cur, start = nil, line+i+1
				continue
			}
			cur = append(cur, l)
		}
		flush()
	}
	for _, b := range blocks(t) {
		text := strings.Join(b.text, "\n")
		switch b.lang {
		case "yaml", "yml":
			add(b.page, b.line, text)
		case "json":
			// JSON is YAML; a fragment such as `"field": {...}` is one
			// once in braces.
			if strings.HasPrefix(strings.TrimSpace(text), `"`) {
				text = "{" + text + "}"
			}
			add(b.page, b.line, text)
		}
	}
	_, docs := shellBlocks(t)
	for _, d := range docs {
		if ext := path.Ext(d.target); ext == ".yaml" || ext == ".yml" || d.delim == "YAML" {
			add(d.page, d.line, d.body)
		}
	}
	return out
}

// docsScheme knows the objects the docs may show: Kubernetes' own, Kueue's
// v1beta2 API, its Configuration and its visibility API, all of the patched
// tree.
func docsScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		kueuev1beta2.AddToScheme,
		configv1beta2.AddToScheme,
		visibilityv1beta2.AddToScheme,
	} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// errSkipped is a document the test cannot check, with the reason.
var errSkipped = errors.New("skipped")

// checkYAML decodes one document strictly into its Go type: an object by
// its apiVersion and kind, an evaluation scenario (no apiVersion; a name
// and clusterQueues, or the single-queue format's quota and demand) as
// `kueue-waittime eval -f` reads it, validation included.
func checkYAML(s *runtime.Scheme, data []byte) (string, error) {
	var fields map[string]any
	if err := yaml.Unmarshal(data, &fields); err != nil {
		return "", fmt.Errorf("not YAML: %w", err)
	}
	apiVersion, _ := fields["apiVersion"].(string)
	kind, _ := fields["kind"].(string)
	if apiVersion != "" || kind != "" {
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return "", err
		}
		gvk := gv.WithKind(kind)
		if !s.Recognizes(gvk) {
			return gvk.String(), fmt.Errorf("%w: no Go type for %s", errSkipped, gvk)
		}
		obj, err := s.New(gvk)
		if err != nil {
			return "", err
		}
		return gvk.String(), yaml.UnmarshalStrict(data, obj)
	}
	_, multiTenant := fields["clusterQueues"]
	_, quota := fields["quota"]
	_, demand := fields["demand"]
	if multiTenant || (quota && demand) {
		return "eval scenario", app.ParseScenario(data)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, newObj := range fragmentTypes {
		obj := newObj()
		typ := reflect.TypeOf(obj).Elem()
		known := jsonFields(typ)
		applies := true
		for _, k := range keys {
			applies = applies && known[k]
		}
		if !applies {
			continue
		}
		err := yaml.UnmarshalStrict(data, obj)
		if err == nil {
			return "fragment of " + typ.String(), nil
		}
		errs = append(errs, fmt.Errorf("as a %s: %w", typ, err))
	}
	if len(errs) > 0 {
		return "fragment", errors.Join(errs...)
	}
	return "", fmt.Errorf("%w: a fragment without apiVersion and kind, nor a scenario, nor a piece of a type it might show (fields %v)", errSkipped, keys)
}

// fragmentTypes are the types whose pieces the docs show without apiVersion
// and kind: the visibility API's answers. A fragment is decoded strictly
// into each type that has all its top-level fields, and must decode into
// one of them.
var fragmentTypes = []func() any{
	func() any { return &visibilityv1beta2.PendingWorkload{} },
	func() any { return &visibilityv1beta2.PendingWorkloadsSummary{} },
	func() any { return &visibilityv1beta2.WaitTimeReview{} },
	func() any { return &visibilityv1beta2.DispatchedWorkloadsSummary{} },
}

// jsonFields returns the JSON names of a struct's fields, those of its
// inlined (embedded) structs included.
func jsonFields(typ reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) && f.Type.Kind() == reflect.Struct {
			for k := range jsonFields(f.Type) {
				out[k] = true
			}
			continue
		}
		if name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}

// TestYAMLBlocks decodes the docs' YAML strictly into the Go types of the
// code: a field the code does not have, or a value of the wrong type,
// fails.
func TestYAMLBlocks(t *testing.T) {
	s := docsScheme(t)
	checked, skipped := map[string]int{}, 0
	for _, d := range yamlDocuments(t) {
		t.Run(d.name, func(t *testing.T) {
			kind, err := checkYAML(s, d.data)
			switch {
			case errors.Is(err, errSkipped):
				skipped++
				t.Logf("not checked: %v", err)
			case err != nil:
				t.Errorf("%s: %v\n%s", kind, err, d.data)
			default:
				checked[kind]++
			}
		})
	}
	total := 0
	for _, n := range checked {
		total += n
	}
	t.Logf("%d YAML documents checked %v, %d skipped", total, checked, skipped)
	if total < minYAMLDocuments {
		t.Errorf("checked %d YAML documents, want at least %d: did the extraction break?", total, minYAMLDocuments)
	}
}

var (
	goTestRunRE   = regexp.MustCompile(`^Test[A-Za-z0-9_]*$`)
	k8sBinRE      = regexp.MustCompile(`^bin/k8s/([^/]+)/`)
	placeholderIn = regexp.MustCompile(`[<>$*?]|\.\.\.`)
)

// TestRepoReferences checks what the docs' commands say of the repository
// itself: the repository paths they name exist (a program, an argument, a
// flag's value), kubectl and the control plane are run from the version
// make builds (bin/k8s/$(K8S_VERSION)/), `go test ./pkg -run TestName` names a
// test of that package, and `sed -i s/OLD/NEW/ FILE` finds OLD in FILE.
func TestRepoReferences(t *testing.T) {
	db := readMakeDatabase(t)
	entries, err := os.ReadDir(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	// The tracked top-level directories; bin/ and _output/ are what make
	// builds.
	var tops []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(e.Name(), "_") && e.Name() != "bin" {
			tops = append(tops, e.Name()+"/")
		}
	}
	isRepoPath := func(w string) bool {
		w = strings.TrimPrefix(w, "./")
		for _, top := range tops {
			if strings.HasPrefix(w, top) {
				return !placeholderIn.MatchString(w)
			}
		}
		return false
	}
	cmds, _ := shellBlocks(t)
	checked := 0
	for _, c := range cmds {
		var words []string
		for _, a := range append(append([]string{}, c.env...), c.args...) {
			words = append(words, a)
			if _, v, ok := strings.Cut(a, "="); ok {
				words = append(words, v)
				// A make variable's value may be a command line (EVAL_ARGS).
				if inner, _ := splitWords(v); len(inner) == 1 {
					words = append(words, inner[0]...)
				}
			}
		}
		var refs []string
		for _, w := range words {
			if isRepoPath(w) || k8sBinRE.MatchString(w) {
				refs = append(refs, w)
			}
		}
		goTest := isProgram(c, "go") && len(c.args) > 1 && c.args[1] == "test"
		sed := isProgram(c, "sed") && len(c.args) > 3 && c.args[1] == "-i"
		if len(refs) == 0 && !goTest && !sed {
			continue
		}
		checked++
		t.Run(c.name(), func(t *testing.T) {
			for _, w := range refs {
				if m := k8sBinRE.FindStringSubmatch(w); m != nil {
					if diff := cmp.Diff(db.variables["K8S_VERSION"], m[1]); diff != "" {
						t.Errorf("%s: %s is not the version make builds into bin/k8s/ (-K8S_VERSION +doc):\n%s", c, w, diff)
					}
					continue
				}
				if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(w))); err != nil {
					t.Errorf("%s: %v", c, err)
				}
			}
			if goTest {
				checkGoTestRun(t, c)
			}
			if sed {
				checkSed(t, c)
			}
		})
	}
	t.Logf("%d commands naming the repository checked", checked)
	if checked < minRepoReferences {
		t.Errorf("checked %d commands naming the repository, want at least %d: did the extraction break?", checked, minRepoReferences)
	}
}

// checkGoTestRun checks that `go test PKG -run NAME` names a test function
// of PKG, when NAME is a plain test name rather than a pattern.
func checkGoTestRun(t *testing.T, c command) {
	t.Helper()
	var pkgs []string
	run := ""
	for i := 2; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case a == "-run" && i+1 < len(c.args):
			run = c.args[i+1]
			i++
		case strings.HasPrefix(a, "-run="):
			run = strings.TrimPrefix(a, "-run=")
		case strings.HasPrefix(a, "./") && !strings.HasSuffix(a, "..."):
			pkgs = append(pkgs, a)
		}
	}
	if !goTestRunRE.MatchString(run) || len(pkgs) == 0 {
		return
	}
	decl := regexp.MustCompile(`(?m)^func ` + run + `\(t \*testing\.T\)`)
	for _, p := range pkgs {
		files, err := filepath.Glob(filepath.Join(repoRoot, filepath.FromSlash(p), "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			found = found || decl.Match(data)
		}
		if !found {
			t.Errorf("%s: %s has no func %s", c, p, run)
		}
	}
}

// checkSed checks that `sed -i 's/OLD/NEW/' FILE` finds OLD in FILE (a
// basic regular expression the docs keep to its common subset with Go's).
func checkSed(t *testing.T, c command) {
	t.Helper()
	script := c.args[2]
	if len(script) < 4 || script[0] != 's' {
		return
	}
	expr, _, ok := strings.Cut(script[2:], script[1:2])
	if !ok {
		return
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		t.Errorf("%s: %v", c, err)
		return
	}
	for _, f := range c.args[3:] {
		data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(f)))
		if err != nil {
			t.Errorf("%s: %v", c, err)
			continue
		}
		if !re.Match(data) {
			t.Errorf("%s: %s has nothing that %q matches", c, f, expr)
		}
	}
}
