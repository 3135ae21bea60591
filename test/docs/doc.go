// Package docs checks the examples of README.md and docs/ against the code
// they describe, without a cluster: the make targets they name exist, the
// kueue-waittime commands and flags they show parse, and their YAML objects
// decode strictly into their Go types.
package docs
