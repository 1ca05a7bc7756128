#!/usr/bin/env bash
# `fleetsim validate` and `fleetsim import mlperf` through the command line: the MLPerf fixture
# tree imported and validated (every row modelled), --html rendered in headless Chromium (the two
# charts are <svg> in the parsed DOM, the screenshot is a real picture, no scripts), --csv with the
# breakdown columns, --system / --default / --model-map, and bad input: exit 2 with the file and
# line of each malformed row while the other rows are still validated.
set -u
bin="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; }

hdr="source_url,source_version,hardware,num_gpus,model,precision,seq_len,gbs,mbs,tp,pp,cp,vp,ep,etp,dp,metric_name,metric_value,metric_unit,notes"
row() {  # hardware model mbs metric value unit notes
  echo "https://example.invalid/x,test,$1,8,$2,BF16,8192,32,$3,1,1,1,,,,,$4,$5,$6,\"$7\""
}

# ---- import mlperf: fixture tree -> CSV -> validate models every row ----
"$bin" import mlperf tests/validate/mlperf --out "$tmp/mlperf.csv" >"$tmp/imp.out" 2>&1 \
  && ok || { bad "import mlperf"; cat "$tmp/imp.out"; }
[ "$(wc -l <"$tmp/mlperf.csv")" -eq 4 ] && ok || bad "import mlperf: want a header and 3 rows"
"$bin" validate --reference "$tmp/mlperf.csv" >"$tmp/mv.out" 2>&1 && ok || bad "validate mlperf rows"
grep -q "^skipped: 0 rows" "$tmp/mv.out" && ok || { bad "mlperf rows skipped"; cat "$tmp/mv.out"; }
grep -q "over 3 rows" "$tmp/mv.out" && ok || bad "mlperf: want 3 compared rows"
# A truncated MLLOG line: exit 2, file and line.
cp -r tests/validate/mlperf "$tmp/tree"
log="$tmp/tree/results/gb300_n2_ngc25.09_nemo/llama31_405b/result_0.txt"
sed -i '7s/\(.\{60\}\).*/\1/' "$log"
"$bin" import mlperf "$tmp/tree" >"$tmp/trunc.out" 2>"$tmp/trunc.err"
[ $? -eq 2 ] && ok || bad "truncated MLLOG: want exit 2"
grep -q "fleetsim: error: $log:line 7: expected one complete MLLOG JSON object" "$tmp/trunc.err" \
  && ok || { bad "truncated MLLOG message"; cat "$tmp/trunc.err"; }

# ---- --html and --csv on training, collective and skipped rows ----
{
  echo "$hdr"
  tail -n +2 "$tmp/mlperf.csv"
  row "NVIDIA H100-SXM5-80GB" LLAMA3_8B 1 tokens_per_sec_per_gpu 9500 tokens/s/GPU "a"
  row "NVIDIA Blackwell GPU (B200-SXM-180GB)" LLAMA3_8B 1 step_time 1.4 s "b"
  row "H100" "Maxtext llama2-70b" 1 tokens_per_sec_per_gpu 1000 "" "c"
  echo "https://example.invalid/n,test,H100 80GB HBM3,8,all_reduce,float32,,,,,,,,,,,busbw,350,GB/s,msg_bytes=268435456"
} >"$tmp/mix.csv"
"$bin" validate --reference "$tmp/mix.csv" --html "$tmp/v.html" --csv "$tmp/v.csv" >"$tmp/mix.out" 2>&1 \
  && ok || { bad "validate --html --csv"; cat "$tmp/mix.out"; }
html="$tmp/v.html"
[ "$(grep -o "<svg" "$html" | wc -l)" -eq 2 ] && ok || bad "html: want 2 <svg>"
for h in "Predicted vs measured" "Error distribution" "By model family" "By system" "Rows"; do
  grep -q "<h2>$h</h2>" "$html" && ok || bad "html: no '$h' section"
done
grep -q "skipped: framework &#39;maxtext&#39;\|skipped: framework 'maxtext'" "$html" && ok \
  || bad "html: the skipped row's reason"
grep -qE "<script|https?://[^\"]*\.(js|css)" "$html" && bad "html: not self-contained" || ok
head -1 "$tmp/v.csv" | grep -q "compute_s,tp_exposed_s,cp_exposed_s,ep_exposed_s,pp_exposed_s,dp_exposed_s,bubble_s,optimizer_s,host_exposed_s,memory_gib,memory_need_gib,hbm_gib,memory_fits" \
  && ok || bad "csv: breakdown columns"
[ "$(grep -c ',compared,' "$tmp/v.csv")" -eq 6 ] && ok || bad "csv: want 6 compared rows"

# ---- fits per throughput row and the summary count ----
# Llama 3 8B with data parallelism only on 8 B200 (180 GB = 167.6 GiB) needs 2 · 2 B · 8.03e9 =
# 32 GB of weights and gradients, 12 B · 8.03e9 / 8 = 12 GB of sharded optimizer state and, at
# 8192 tokens, about 36 GB of activations (32 layers · 139,392 B per token): it fits. With
# micro-batch 4 the activations are 4 · 36 = 146 GB: 190 GB, it does not fit, but recompute
# would make it (its floor, weights + gradients + CUDA context, is 33 GB). Llama 3 70B the same
# way holds the 70.6 B bf16 weights and their bf16 gradients, 2 · 2 B · 70.6e9 = 282 GB, more
# than the HBM whatever the activations: layout_infeasible, counted apart.
{
  echo "$hdr"
  row "NVIDIA Blackwell GPU (B200-SXM-180GB)" LLAMA3_8B 1 tokens_per_sec_per_gpu 9000 tokens/s/GPU "f1"
  row "NVIDIA Blackwell GPU (B200-SXM-180GB)" LLAMA3_70B 1 tokens_per_sec_per_gpu 1000 tokens/s/GPU "f2"
  row "NVIDIA Blackwell GPU (B200-SXM-180GB)" LLAMA3_8B 4 tokens_per_sec_per_gpu 9000 tokens/s/GPU "f3"
} >"$tmp/fit.csv"
"$bin" validate --reference "$tmp/fit.csv" --csv "$tmp/fit.out.csv" >"$tmp/fit.out" 2>&1 \
  && ok || { bad "validate fits rows"; cat "$tmp/fit.out"; }
grep -q "^memory: 1 of 3 compared throughput rows predicted not to fit in HBM (lines 4)$" \
  "$tmp/fit.out" && ok || { bad "summary: want 1 of 3 not fitting (line 4)"; cat "$tmp/fit.out"; }
grep -q "^memory: 1 of 3 state a layout whose weights, gradients and CUDA context alone exceed the HBM (layout_infeasible, not counted above; lines 3)$" \
  "$tmp/fit.out" && ok || { bad "summary: want line 3 layout_infeasible"; cat "$tmp/fit.out"; }
/usr/bin/python3 - "$tmp/fit.out.csv" <<'EOF' && ok || bad "csv: fits column and predicted need"
import csv, sys
rows = {r["line"]: r for r in csv.DictReader(open(sys.argv[1]))}
assert rows["2"]["memory_fits"] == "yes" and rows["4"]["memory_fits"] == "no", rows
assert rows["3"]["memory_fits"] == "layout_infeasible", rows["3"]
assert "layout_infeasible: " in rows["3"]["notes"], rows["3"]["notes"]
need = float(rows["3"]["memory_need_gib"])
assert need > 2 * 2 * 70.5e9 / 2**30, need  # weights + gradients alone
assert float(rows["2"]["memory_need_gib"]) < float(rows["2"]["hbm_gib"])
assert float(rows["4"]["memory_need_gib"]) > float(rows["4"]["hbm_gib"])
EOF
"$bin" validate --reference "$tmp/fit.csv" --json >"$tmp/fit.json" 2>&1 && ok || bad "validate --json"
/usr/bin/python3 - "$tmp/fit.json" <<'EOF' && ok || bad "json: fits per row, n_not_fitting, n_layout_infeasible"
import json, sys
j = json.load(open(sys.argv[1]))
fits = {r["line"]: r["fits"] for r in j["rows"]}
assert fits == {2: True, 3: False, 4: False}, fits
assert j["n_not_fitting"] == 1 and j["n_memory_checked"] == 3, j
assert j["n_layout_infeasible"] == 1, j
r3 = [r for r in j["rows"] if r["line"] == 3][0]
# The floor: 70,553,706,496 parameters · (2 B bf16 weights + 2 B bf16 gradients) + 1 GiB.
assert r3["layout_infeasible"], r3
assert abs(r3["memory_floor_gib"] - (4 * 70553706496 / 2**30 + 1)) < 1e-3, r3
assert all("layout_infeasible" not in r for r in j["rows"] if r["line"] != 3)
assert all(r["memory_need_gib"] > r["memory_allocated_gib"] for r in j["rows"])
EOF

chromium_bin=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium_bin" ]; then
  bad "chromium is not installed: run make deps (scripts/install-deps.sh installs Debian's chromium)"
else
  chrome() {
    timeout 120 "$chromium_bin" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync \
      --user-data-dir="$tmp/profile-$RANDOM" "$@" 2>>"$tmp/chromium.log"
  }
  chrome --dump-dom "file://$html" >"$tmp/v.dom"
  [ "$(grep -o "<svg" "$tmp/v.dom" | wc -l)" -eq 2 ] && ok || bad "Chromium's DOM: want 2 <svg>"
  grep -q "<circle" "$tmp/v.dom" && ok || bad "Chromium's DOM: no points"
  chrome --window-size=1000,2400 --screenshot="$tmp/v.png" "file://$html" >/dev/null
  /usr/bin/python3 - "$tmp/v.png" <<'EOF' && ok || bad "blank screenshot"
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
w, h = im.size
px = im.getdata()
ink = sum(1 for p in px if min(p) < 200)
colours = len(set(px))
print(f"  validate.png: {w}x{h}, {ink / (w * h):.1%} ink, {colours} colours")
sys.exit(0 if w >= 800 and ink / (w * h) > 0.02 and colours >= 8 else 1)
EOF
fi

# ---- --system, --default, --model-map ----
{ echo "$hdr"; row "A100-SXM4-80GB" LLAMA3_8B "" tokens_per_sec_per_gpu 3000 "" ""; } >"$tmp/opt.csv"
"$bin" validate --reference "$tmp/opt.csv" >"$tmp/o1.out" 2>&1
grep -q "^skipped: 1 rows" "$tmp/o1.out" && ok || bad "unknown hardware: want a skip"
"$bin" validate --reference "$tmp/opt.csv" --system dgx-h100 --default mbs=1 >"$tmp/o2.out" 2>&1 \
  && ok || bad "--system --default"
grep -q "^skipped: 0 rows" "$tmp/o2.out" && ok || { bad "--system --default: still skipped"; cat "$tmp/o2.out"; }
grep -q "defaults used: line 2: mbs=1" "$tmp/o2.out" && ok || bad "--default: not reported"
{ echo "$hdr"; row "H100" "my-model" 1 tokens_per_sec_per_gpu 9000 "" ""; } >"$tmp/map.csv"
printf 'name,model\nmy-model,llama3-8b\n' >"$tmp/map-names.csv"
"$bin" validate --reference "$tmp/map.csv" --model-map "$tmp/map-names.csv" >"$tmp/o3.out" 2>&1
grep -q "^skipped: 0 rows" "$tmp/o3.out" && ok || bad "--model-map"
"$bin" validate --reference "$tmp/map.csv" --default mbz=1 >"$tmp/o4.out" 2>"$tmp/o4.err"
[ $? -eq 2 ] && grep -q "did you mean 'mbs'" "$tmp/o4.err" && ok || bad "--default unknown key"

# ---- bad input: exit 2 with file and line; the good row is still validated ----
{
  echo "$hdr"
  row DGX-H100 LLAMA3_8B 1 step_time -2.5 s "neg"
  echo "https://example.invalid/x,test,DGX-H100,eight,LLAMA3_8B,BF16,8192,32,1,1,1,1,,,,,tokens_per_sec_per_gpu,1000,,gpus"
  row DGX-H100 LLAMA3_8B 1 tokens_per_sec_per_gpu 9000 tokens/s/GPU "good"
} >"$tmp/bad.csv"
"$bin" validate --reference "$tmp/bad.csv" >"$tmp/bad.out" 2>"$tmp/bad.err"
[ $? -eq 2 ] && ok || bad "malformed rows: want exit 2"
grep -q "fleetsim: error: $tmp/bad.csv:line 2: column 'metric_value': expected a positive step_time, got -2.5" "$tmp/bad.err" \
  && ok || { bad "negative step time message"; cat "$tmp/bad.err"; }
grep -q "fleetsim: error: $tmp/bad.csv:line 3: column 'num_gpus': expected a positive integer, got 'eight'" "$tmp/bad.err" \
  && ok || bad "non-numeric GPU count message"
grep -q "over 1 rows" "$tmp/bad.out" && ok || bad "malformed rows: the good row was not validated"
printf 'hardware,num_gpu,model,metric_name,metric_value,notes\nH100,8,x,busbw,1,\n' >"$tmp/col.csv"
"$bin" validate --reference "$tmp/col.csv" >/dev/null 2>"$tmp/col.err"
[ $? -eq 2 ] && grep -q "$tmp/col.csv:line 1: unknown column 'num_gpu' (did you mean 'num_gpus'?)" "$tmp/col.err" \
  && ok || { bad "wrong column"; cat "$tmp/col.err"; }

# ---- fine-tuning rows: NVIDIA's SFT and LoRA rows are compared, not skipped ----
{ echo "$hdr"; grep -E 'task=(SFT|LoRA)' validation/nemo_performance_summary.csv; } >"$tmp/ft.csv"
nft=$(($(wc -l <"$tmp/ft.csv") - 1))
"$bin" validate --reference "$tmp/ft.csv" --csv "$tmp/ft.out.csv" >"$tmp/ft.out" 2>&1 \
  && ok || { bad "validate fine-tuning rows"; cat "$tmp/ft.out"; }
# Each run is published as tokens/s/GPU and TFLOP/s/GPU: one of the pair is compared, the
# other skipped as the same run; no row is skipped for another reason.
[ "$(grep -c ',compared,' "$tmp/ft.out.csv")" -eq $((nft / 2)) ] && ok || bad "fine-tuning: want $((nft / 2)) compared rows"
[ "$(grep ',skipped,' "$tmp/ft.out.csv" | grep -vc 'counted once')" -eq 0 ] && ok \
  || { bad "fine-tuning rows skipped"; grep ',skipped,' "$tmp/ft.out.csv"; }
[ "$(grep -c ' sft doc240' "$tmp/ft.out.csv")" -gt 0 ] && [ "$(grep -c ' lora doc240 r16 linear_qkv' "$tmp/ft.out.csv")" -gt 0 ] \
  && ok || { bad "fine-tuning rows: want the sft / lora task in the config"; head -3 "$tmp/ft.out.csv"; }

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
