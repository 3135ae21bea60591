# cycle-lengths.awk: from one eval run's cycles CSV (eval --cycles --out DIR), the
# cycles that obtained their heads between `from` and `to` seconds after the first
# (default 20 and 120): their number and mean head count, and how their busy times
# (from the previous cycle obtaining its heads to this one waiting for heads, the
# previous cycle's work) split at 50 and 300 ms, with the long ones' mean and share
# of all the busy time.
#   awk [-v from=20 -v to=120] -f hack/cycle-lengths.awk DIR/<scenario>-cycles.csv
BEGIN { FS = ","; if (from == "") from = 20; if (to == "") to = 120 }
NR == 2 { t0 = $1 }
NR > 1 {
  at = $1 - t0
  if (prev != "" && at >= from && at < to) {
    b = ($1 - $4) - prev; n++; heads += ph; total += b
    if (b < 0.05) short++; else if (b < 0.3) mid++; else { long++; longBusy += b }
  }
  prev = $1; ph = $3
}
END {
  if (!n) { print "no cycles in [" from ", " to ") s"; exit 1 }
  longMean = long ? longBusy / long : 0; longShare = total ? 100 * longBusy / total : 0
  printf "%d cycles from %g to %g s, %.1f heads each: %d under 50 ms, %d of 50-300 ms, %d over 300 ms (mean %.2f s, %.0f %% of the busy time)\n", \
    n, from, to, heads / n, short, mid, long, longMean, longShare
}
