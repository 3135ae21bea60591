#!/usr/bin/env bash
# Builds the tools that check config/monitoring, from Go modules:
#   - promtool, from the github.com/prometheus/prometheus module at the
#     version hack/tools/go.mod requires, with that module's own go.mod (as
#     `go install` does), once into bin/tools/promtool-<version>/;
#   - promqlcheck (hack/tools/promqlcheck), against the same module, into
#     bin/tools/promqlcheck/ (rebuilt each call; Go's cache makes it quick).
# Prints the two paths as PROMTOOL=... and PROMQLCHECK=... lines.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

TOOLS=${ROOT}/hack/tools
version=$(cd "${TOOLS}" && GOWORK=off go list -m -f '{{.Version}}' github.com/prometheus/prometheus)
promtool_dir=${ROOT}/bin/tools/promtool-${version}
if [[ ! -x "${promtool_dir}/promtool" ]]; then
  echo "monitoring-tools: building promtool ${version} into ${promtool_dir} (once; a few minutes)" >&2
  # remove_all_sd (Prometheus's own build tag) leaves out the service
  # discovery plugins (AWS, Azure, GCE, OCI, OpenStack... SDKs, the largest
  # packages of the build): rule checks and rule unit tests use none of them.
  (cd / && GOWORK=off GOBIN="${promtool_dir}" scratch_gocache go install -tags remove_all_sd "github.com/prometheus/prometheus/cmd/promtool@${version}")
fi
(cd "${TOOLS}" && GOWORK=off go build -o "${ROOT}/bin/tools/promqlcheck/promqlcheck" ./promqlcheck)
echo "PROMTOOL=${promtool_dir}/promtool"
echo "PROMQLCHECK=${ROOT}/bin/tools/promqlcheck/promqlcheck"
