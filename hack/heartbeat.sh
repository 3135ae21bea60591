#!/usr/bin/env bash
# hack/heartbeat.sh MESSAGE COMMAND [ARG...] runs COMMAND and, while it runs,
# prints "MESSAGE (Ns)" every 30 seconds, so that a long compilation that
# prints nothing says it is still at work. It exits with COMMAND's status.
set -euo pipefail
message=$1
shift
"$@" &
pid=$!
start=$SECONDS
(
  while sleep 30; do
    kill -0 "${pid}" 2>/dev/null || exit 0
    echo "${message} ($((SECONDS - start))s)"
  done
) &
beat=$!
status=0
wait "${pid}" || status=$?
kill "${beat}" 2>/dev/null || true
wait "${beat}" 2>/dev/null || true
exit "${status}"
