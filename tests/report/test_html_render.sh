#!/usr/bin/env bash
# The HTML reports render in headless Chromium (Debian's chromium, installed by
# scripts/install-deps.sh): `run --html` for a run scenario and an MoE scenario, and `plan` for a
# small MoE plan. Checks: every chart is an <svg> in the DOM Chromium parsed (--dump-dom), the
# screenshot is a real picture (not blank: enough non-white pixels and colours), and the
# `run --timeline` Chrome trace is JSON with job-state slices.
set -u
bin="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; }

chromium_bin=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium_bin" ]; then
  echo "chromium is not installed: run make deps (scripts/install-deps.sh installs Debian's chromium)"
  exit 1
fi
# Flags for a closed network and a root sandbox (../.library/env: Chromium under a probe).
chrome() {
  timeout 120 "$chromium_bin" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile-$RANDOM" "$@" 2>>"$tmp/chromium.log"
}

"$bin" run scenarios/run-quickstart-tiered.json --out "$tmp/run" --html \
  --timeline "$tmp/run/timeline.json" >"$tmp/run.out" 2>&1 || bad "run --html (run section)"
"$bin" run scenarios/moe-skew-b200.json --out "$tmp/moe" --html >"$tmp/moe.out" 2>&1 \
  || bad "run --html (MoE)"
"$bin" plan tests/report/moe-plan.json --out "$tmp/plan" >"$tmp/plan.out" 2>&1 || bad "plan"

# name, html, charts expected (svg elements), a heading that must be there
check_page() {
  local name="$1" html="$2" want="$3" heading="$4"
  [ -s "$html" ] || { bad "$name: $html missing"; return; }
  local in_file
  in_file=$(grep -o "<svg" "$html" | wc -l)
  [ "$in_file" -eq "$want" ] && ok || bad "$name: $in_file <svg> in the file, want $want"
  grep -q "<h2>$heading</h2>" "$html" && ok || bad "$name: no '$heading' section"
  grep -qE "<script|https?://[^\"]*\.(js|css)" "$html" && bad "$name: not self-contained" || ok
  chrome --dump-dom "file://$html" >"$tmp/$name.dom"
  local in_dom
  in_dom=$(grep -o "<svg" "$tmp/$name.dom" | wc -l)
  [ "$in_dom" -eq "$want" ] && ok || bad "$name: Chromium's DOM has $in_dom <svg>, want $want"
  chrome --window-size=1000,2400 --screenshot="$tmp/$name.png" "file://$html" >/dev/null
  if [ ! -s "$tmp/$name.png" ]; then
    bad "$name: no screenshot"; tail -5 "$tmp/chromium.log"; return
  fi
  /usr/bin/python3 - "$tmp/$name.png" <<'EOF' && ok || bad "$name: blank screenshot"
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
w, h = im.size
px = im.getdata()
ink = sum(1 for p in px if min(p) < 200)
colours = len(set(px))
print(f"  {sys.argv[1].rsplit('/', 1)[1]}: {w}x{h}, {ink / (w * h):.1%} ink, {colours} colours")
sys.exit(0 if w >= 800 and ink / (w * h) > 0.02 and colours >= 8 else 1)
EOF
}
# run + run section: breakdown, memory, lost time, ETTR vs interval.
check_page run "$tmp/run/report.html" 4 "ETTR vs checkpoint interval"
# MoE: breakdown, memory, heatmap.
check_page moe "$tmp/moe/report.html" 3 "MoE load"
# plan: cost vs days, time to train, scaling, breakdown, ETTR vs interval, MoE heatmap.
check_page plan "$tmp/plan/report.html" 6 "MoE load"

/usr/bin/python3 - "$tmp/run/timeline.json" <<'EOF' && ok || bad "timeline"
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
state = [e for e in ev if e.get("tid") == 1 and e["ph"] == "X"]
assert state and state[0]["name"] == "training" and state[0]["ts"] == 0, state[:1]
assert any(e["name"].startswith("interrupted") for e in state)
# Slices on the state track are back to back: each starts where the previous ended.
for a, b in zip(state, state[1:]):
    assert abs(a["ts"] + a["dur"] - b["ts"]) <= 1, (a, b)
assert any(e["ph"] == "i" and e["name"] == "failure" for e in ev)
EOF

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
