// Package monitoring checks config/monitoring, the Grafana dashboard and the
// Prometheus alerting rules an operator installs beside the manager, with
// Prometheus's own tools rather than by eye:
//
//   - every PromQL expression of the dashboard and the rules parses with
//     Prometheus's parser (hack/tools/promqlcheck, built from the
//     github.com/prometheus/prometheus module), and names only series the
//     patched manager registers with the WaitTimeEstimation gate on, read
//     from the manager's own registration code;
//   - the dashboard shows every figure an operator needs to decide whether
//     to trust the estimates;
//   - the rules pass `promtool check rules` and the unit tests of
//     alerts_test.yaml under `promtool test rules`, and every alert has a
//     test case where it fires and one where it does not.
//
// The tests need the two binaries in the PROMTOOL and PROMQLCHECK
// environment variables and fail without them: run them through `make
// test-monitoring`, which builds both into bin/tools/ once.
package monitoring
