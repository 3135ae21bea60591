# long-waits.awk: from an eval per-workload CSV (eval --out DIR:
# DIR/<scenario>-workloads.csv), the scored workloads of ClusterQueue `queue` at
# level `level` whose remaining wait was at least `min` seconds (summary.md's
# "Long waits in transient overload" takes twice the ClusterQueue's mean service):
# how many, their mean remaining wait, and the forecast's and the EMA's mean
# relative error, |predicted − remaining| / remaining, with the forecast's signed
# mean, (predicted − remaining) / remaining (negative: short).
#   awk -v queue=infer -v level=1.20 -v min=2 -f hack/long-waits.awk DIR/mt-dra-cohort-workloads.csv
BEGIN { FS = "," }
NR > 1 && $8 == "Forecast" && $3 == queue && $1 == level && $10 >= min && $10 > 0 {
  n++; remaining += $10
  d = ($11 - $10) / $10; signed += d; absolute += (d < 0 ? -d : d)
  if ($14 != "") { e = ($14 - $10) / $10; ema += (e < 0 ? -e : e); withEMA++ }
}
END {
  if (n == 0) { print "none"; exit }
  printf "%d waits, mean remaining %.2f s; forecast relative error %.2f (signed %+.2f), EMA %.2f\n", n, remaining / n, absolute / n, signed / n, (withEMA ? ema / withEMA : 0)
}
