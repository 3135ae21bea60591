# admissions-per-cycle.awk: from one eval run's cycles CSV (eval --cycles --out
# DIR) and its per-workload CSV, per stretch of `bin` seconds (default 10) from
# the first cycle: the scheduler's cycles, their mean busy time (from one cycle
# obtaining its heads to the next waiting for heads) and head count, the
# replicas' ClusterQueues that admitted a scored workload in the stretch (its
# first estimate plus the wait that remained; those admitted before any estimate
# are not in the CSV), and their mean admissions per cycle. Kueue tries a
# ClusterQueue's head once a cycle: a ClusterQueue that keeps a head admits at
# most once a cycle, fewer when some of its heads do not fit. -v from=S starts
# the first stretch S seconds after the first cycle (default 0); -v queue=NAME
# counts the ClusterQueues of that name only (default all).
#   awk -f hack/admissions-per-cycle.awk DIR/<scenario>-cycles.csv DIR/<scenario>-workloads.csv
#   awk -v queue=team-a -v from=20 -v bin=100 -f hack/admissions-per-cycle.awk ...
BEGIN { FS = ","; if (bin == "") bin = 10; from += 0 }
FNR == 1 { file++; next }
file == 1 {
  if (t0 == "") t0 = $1
  at = $1 - t0 - from; b = int(at / bin)
  if (at >= 0) {
    cycles[b]++; heads[b] += $3; last = b
    if (prev != "") busy[b] += ($1 - $4) - prev
  }
  prev = $1
  next
}
file == 2 && $20 != "" && (queue == "" || $3 == queue) {
  at = $20 + $10 - t0 - from; if (at < 0) next
  b = int(at / bin)
  if (b < 0 || b > last) next
  k = $1 " " $2 " " $3
  if (!((b, k) in adm)) queues[b]++
  adm[b, k]++; admitted[b]++
}
END {
  for (b = 0; b <= last; b++) {
    if (!cycles[b]) continue
    per = queues[b] ? admitted[b] / queues[b] / cycles[b] : 0
    printf "%4d-%4d s: %3d cycles, busy %.3f s, %.1f heads; %3d ClusterQueues admitting, %.2f admissions each per cycle\n", \
      from + b * bin, from + (b + 1) * bin, cycles[b], busy[b] / cycles[b], heads[b] / cycles[b], queues[b], per
  }
}
