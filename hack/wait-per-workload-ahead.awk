# wait-per-workload-ahead.awk: from an eval per-workload CSV (eval --out DIR:
# DIR/<scenario>-workloads.csv, with the raw quantiles), per fifth of each
# replica's ClusterQueue's scored workloads in the order of their first estimates
# (ClusterQueues with at least 50): the mean number of workloads ahead at the first
# estimate (scored ones of the same ClusterQueue estimated earlier and admitted
# later; those admitted before any estimate are not in the CSV), and the roll's
# raw P50 and the wait that remained, each over (workloads ahead + 1): how long the
# roll thought each admission ahead would take, and how long it took.
#   awk -f hack/wait-per-workload-ahead.awk DIR/<scenario>-workloads.csv
BEGIN { FS = "," }
NR > 1 && $8 == "Forecast" && $17 != "" {
  k = $1 " " $2 " " $3; i = ++n[k]; e[k, i] = $20; a[k, i] = $20 + $10; r[k, i] = $17; w[k, i] = $10
}
END {
  for (k in n) {
    if (n[k] < 50) continue
    for (i = 1; i <= n[k]; i++) {
      rank = 0; ahead = 0
      for (j = 1; j <= n[k]; j++) {
        if (e[k, j] < e[k, i] || (e[k, j] == e[k, i] && j < i)) { rank++; if (a[k, j] > e[k, i]) ahead++ }
      }
      p = int(rank * 5 / n[k]); c[p]++; pos[p] += ahead; raw[p] += r[k, i] / (ahead + 1); act[p] += w[k, i] / (ahead + 1)
    }
  }
  for (p = 0; p < 5; p++) printf "fifth %d: %d scored, %.1f ahead, raw P50 %.3f s and remaining wait %.3f s per workload ahead\n", p + 1, c[p], pos[p] / c[p], raw[p] / c[p], act[p] / c[p]
}
