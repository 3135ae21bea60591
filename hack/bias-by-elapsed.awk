# bias-by-elapsed.awk: from an eval per-workload CSV (eval --out DIR:
# DIR/<scenario>-workloads.csv), the forecast's bias per level, ClusterQueue and
# demand class, split by how long the replica had run when each workload got its
# first estimate (20-second bins from the replica's first estimate): does a bias
# shrink as the measured arrival window, which is the replica's age, grows?
# Printed per group: scored workloads, mean remaining wait (s), the mean of
# forecast − remaining over the mean remaining (%), and the P50's coverage.
#   awk -f hack/bias-by-elapsed.awk DIR/<scenario>-workloads.csv
BEGIN { FS = "," }
NR > 1 && $8 == "Forecast" {
  replica = $1 " " $2
  if (!(replica in first) || $20 < first[replica]) first[replica] = $20
  rows[NR] = $0
}
END {
  for (i in rows) {
    split(rows[i], f, ",")
    elapsed = f[20] - first[f[1] " " f[2]]
    bin = int(elapsed / 20) * 20
    if (bin > 60) bin = 60
    g = sprintf("%s %s/%s %s", f[1], f[3], f[4], (bin == 60 ? "60+" : sprintf("%d-%d", bin, bin + 20)))
    n[g]++; remaining[g] += f[10]; bias[g] += f[11] - f[10]; covered[g] += (f[10] <= f[12])
  }
  print "level queue/class seconds-after-start scored remaining_s bias_% p50_coverage"
  for (g in n)
    printf "%s %d %.2f %+.0f %.2f\n", g, n[g], remaining[g] / n[g], 100 * bias[g] / remaining[g], covered[g] / n[g] | "sort"
}
