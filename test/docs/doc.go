// Package docs checks the examples of README.md and docs/ against the code
// they describe, without a cluster, reading them from the Markdown itself:
// the make targets they name exist (from `make -p`) and the variables they
// set are read; the kueue-waittime and kueuectl command lines they show
// (and the kueue-waittime arguments make passes on, such as EVAL_ARGS)
// parse against the real command trees, without running; their YAML and
// JSON (yaml blocks, the here-documents of sh blocks, fragments of the
// visibility API's answers) decode strictly into the Go types of the
// patched tree, and their evaluation scenarios parse and validate as
// `kueue-waittime eval -f` reads them; and the repository paths, the
// bin/k8s/ version, `go test -run` names and `sed -i` patterns they use
// match the repository.
package docs
