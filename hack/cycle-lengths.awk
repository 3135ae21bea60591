# cycle-lengths.awk: from one eval run's cycles CSV (eval --cycles --out DIR), the
# cycles that obtained their heads between `from` and `to` seconds after the first
# (default 20 and 120): their number and mean head count, and how their busy times
# (a cycle's work: from it obtaining its heads to the next one waiting for heads)
# split at 50 and 300 ms, with the long ones' mean and share of all the busy time.
# From a CSV that has them (eval since the phase columns), also, for the short and
# the long cycles: how long their snapshot, nomination and processing took as Kueue
# logs them (processing ends after the heads not admitted are put back and their
# status written), the rest (the loop's backoff, the logging between phases), and
# how many heads they put back not nominated, skipped or otherwise; and over all the
# cycles, the share of the heads put back not nominated and skipped.
#   awk [-v from=20 -v to=120] -f hack/cycle-lengths.awk DIR/<scenario>-cycles.csv
BEGIN { FS = ","; if (from == "") from = 20; if (to == "") to = 120 }
NR == 1 { detail = NF >= 10; next }
NR == 2 { t0 = $1 }
{
  at = $1 - t0
  if (prev != "" && at >= from && at < to) {
    b = ($1 - $4) - prev; n++; heads += ph; total += b
    k = b < 0.05 ? "short" : (b < 0.3 ? "mid" : "long")
    count[k]++; busy[k] += b; snap[k] += p5; nom[k] += p6; proc[k] += p7; nn[k] += p8; sk[k] += p9; ot[k] += p10
  }
  prev = $1; ph = $3; p5 = $5; p6 = $6; p7 = $7; p8 = $8; p9 = $9; p10 = $10
}
END {
  if (!n) { print "no cycles in [" from ", " to ") s"; exit 1 }
  longMean = count["long"] ? busy["long"] / count["long"] : 0; longShare = total ? 100 * busy["long"] / total : 0
  printf "%d cycles from %g to %g s, %.1f heads each: %d under 50 ms, %d of 50-300 ms, %d over 300 ms (mean %.2f s, %.0f %% of the busy time)\n", \
    n, from, to, heads / n, count["short"], count["mid"], count["long"], longMean, longShare
  if (!detail) exit
  split("short long", kinds, " ")
  for (i = 1; i <= 2; i++) {
    k = kinds[i]; c = count[k]
    if (!c) continue
    printf "  %s cycles: busy %.3f s: snapshot %.3f, nomination %.3f, processing %.3f, the rest %.3f; put back %.1f not nominated, %.1f skipped, %.1f otherwise\n", \
      k, busy[k] / c, snap[k] / c, nom[k] / c, proc[k] / c, (busy[k] - snap[k] - nom[k] - proc[k]) / c, nn[k] / c, sk[k] / c, ot[k] / c
  }
  printf "  all cycles: %.3f of the heads put back not nominated, %.3f skipped\n", \
    (nn["short"] + nn["mid"] + nn["long"]) / heads, (sk["short"] + sk["mid"] + sk["long"]) / heads
}
