#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs test/cloud's scenarios (all, or those named), one at a time, and reports TAP; the last line
# is "N passed, N failed". Not part of make test.
# Usage: test/cloud/run.sh [SCENARIO...]      (make check-cloud [ONLY=name])
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=test/cloud/lib.sh
. "$here/lib.sh"

all=$(find "$here" -mindepth 2 -maxdepth 2 -name run.sh -printf '%h\n' | xargs -n1 basename | sort)
if (($# > 0)); then
    names=("$@")
else
    read -r -d '' -a names <<< "$all"
fi
for n in "${names[@]}"; do
    [[ -x $here/$n/run.sh ]] || { echo "check-cloud: no scenario '$n' (have: ${all//$'\n'/ })" >&2; exit 2; }
done

echo "TAP version 13"
echo "1..${#names[@]}"
t0=$EPOCHREALTIME
# The downloads and the images, once, before the first scenario's clock starts.
(tc_prepare) 2>&1 | sed 's/^\([^#]\)/# \1/'
prep=${PIPESTATUS[0]}
if ((prep == TQ_SKIP)); then
    for i in "${!names[@]}"; do echo "ok $((i + 1)) - ${names[$i]} # SKIP"; done
    echo "0 passed, 0 failed"
    exit 0
fi
((prep == 0)) || { echo "Bail out! preparing the cloud image failed"; echo "0 passed, ${#names[@]} failed"; exit 1; }
tq_log "prepared in $(tq_since "$t0") s; $(tq_kernel_report)"

passed=0 failed=0 i=0
for n in "${names[@]}"; do
    i=$((i + 1))
    s0=$EPOCHREALTIME
    "$here/$n/run.sh" < /dev/null 2>&1 | sed 's/^\([^#]\)/# \1/'
    rc=${PIPESTATUS[0]}
    if ((rc == 0)); then
        echo "ok $i - $n ($(tq_since "$s0") s)"
        passed=$((passed + 1))
    elif ((rc == TQ_SKIP)); then
        echo "ok $i - $n # SKIP"
    else
        echo "not ok $i - $n ($(tq_since "$s0") s, exit $rc)"
        failed=$((failed + 1))
    fi
done
tq_log "total $(tq_since "$t0") s"
echo "$passed passed, $failed failed"
((failed == 0))
