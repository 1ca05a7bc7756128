#!/usr/bin/python3
"""validation/dispatch-benchmarks.csv equals validation/convert_dispatch_rows.py's output, and the
converter refuses what it must (rows whose notes do not state the configuration)."""
import importlib.util
import os
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
spec = importlib.util.spec_from_file_location(
    "convert", os.path.join(root, "validation", "convert_dispatch_rows.py"))
conv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conv)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


text, refused = conv.run()
with open(os.path.join(root, "validation", "dispatch-benchmarks.csv"), newline="") as f:
    check(f.read() == text, "validation/dispatch-benchmarks.csv differs from the converter's "
          "output (rerun /usr/bin/python3 validation/convert_dispatch_rows.py)")

# The refusals: pplx README (10 rows: GPU and configuration not stated), Megatron-Bridge guide
# (2: no token count), the report's Table 7 transcription (32: no data type), the two
# post-quantised TensorRT-LLM rows (EP "presumed"), marin's XLA row (1).
reasons = {line: why for line, _, _, why in refused}
check(len(refused) == 47, "expected 47 refused rows, got %d" % len(refused))
check(sum("pplx" in w for w in reasons.values()) == 10, "pplx rows refused")
check(sum(w.startswith("data type not stated") for w in reasons.values()) == 32, "Table 7 rows refused")
check("presumed" in reasons.get(307, ""), "line 307 (EP=8 presumed) refused")
check("tokens per rank" in reasons.get(309, ""), "line 309 (no token count) refused")
check(497 in reasons, "line 497 (XLA ragged all-to-all) refused")

# A row whose notes lack what the format needs is refused with that reason, never guessed.
row = {"source_url": conv.HYBRID, "gpu": "B200", "kernel": "moe_dispatch", "dtype": "fp8",
       "batch": "8", "seq_len": "4096", "time_us": "", "achieved_gbps": "400", "_line": 1,
       "notes": "HybridEP, 8 ranks in one B200 node (NVLink); Torch API; tokens/rank=4096 "
                "hidden=7168 topk=8 random-uniform router, 8 local experts/rank"}
try:
    conv.convert(row)
    failures.append("a row without an SM count was converted")
except conv.Refuse as e:
    check("SM count" in str(e), "refusal names the SM count: %s" % e)
row["notes"] = row["notes"].replace("Torch API", "SM count=16; Torch API")
out = conv.convert(row)
check(len(out) == 1 and out[0]["bw_def"] == "rank_copies" and out[0]["experts"] == 64 and
      "sms=16" in out[0]["notes"], "the completed row converts: %s" % out)
row["dtype"] = ""
try:
    conv.convert(row)
    failures.append("a row without a data type was converted")
except conv.Refuse as e:
    check("data type" in str(e), "refusal names the data type: %s" % e)

# The p5en low-latency rows carry the p5en hardware the UCCL-EP README heads them with.
p5en = [l for l in text.splitlines() if "p5en" in l and "low_latency" in l]
check(len(p5en) == 12, "12 p5en low-latency rows (6 calls, time and bandwidth), got %d" % len(p5en))

if failures:
    for f in failures:
        print("FAIL:", f)
    sys.exit(1)
print("dispatch rows: %d converted, %d refused: ok" % (text.count("\n") - 1, len(refused)))
