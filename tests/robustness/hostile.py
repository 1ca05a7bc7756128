#!/usr/bin/env python3
"""Hostile-input suite: feeds fleetsim hand-written bad inputs (deeply nested JSON, huge numbers,
NaN / Infinity, negative sizes, duplicate keys, a wrong type at every position of real scenarios,
a 100 MB file, non-UTF-8, absurd sizes) and expects, for each, exit code 2 within the time limit
and a message `fleetsim: error: FILE:POINTER: what was expected`.

usage: hostile.py FLEETSIM [--quick]     (run from the repository root)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

FLEETSIM = sys.argv[1]
QUICK = "--quick" in sys.argv
TMP = tempfile.mkdtemp(prefix="fleetsim-hostile-")
results = {"pass": 0, "fail": 0}


def write(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return path


def expect_error(name, args, pointer=None, message=None, timeout=60):
    """Runs fleetsim with args; wants exit 2 and 'fleetsim: error: <file>:<pointer>: ...'."""
    try:
        p = subprocess.run([FLEETSIM] + args + ["--out", os.path.join(TMP, "out")]
                           if args[0] == "run" else [FLEETSIM] + args,
                           capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        results["fail"] += 1
        print(f"FAIL {name}: no answer within {timeout} s (hang)")
        return
    err = p.stderr.decode("utf-8", "replace")
    ok = p.returncode == 2 and err.startswith("fleetsim: error: ")
    if ok and pointer is not None:
        ok = re.search(re.escape(":" + pointer) + r"(/[^:]*)?: ", err) is not None
    if ok and message is not None:
        ok = re.search(message, err) is not None
    if ok:
        results["pass"] += 1
    else:
        results["fail"] += 1
        print(f"FAIL {name}: rc={p.returncode} want 2; pointer {pointer!r}, message {message!r}")
        print("  stderr: " + err[:400].replace("\n", "\n  "))


def scenario_case(name, text, pointer=None, message=None, extra=()):
    path = write(name + ".json", text)
    expect_error(name, ["run", path, *extra], pointer, message)


COLL = json.load(open("scenarios/allreduce-2x-p6-b200.json"))
TRAIN = json.load(open("scenarios/quickstart.json"))

# ---- JSON structure ----
scenario_case("nested-arrays", '{"name": "x", "description": ' + "[" * 100000 + "]" * 100000 + "}",
              "/description", "nesting deeper than 64")
scenario_case("nested-objects", '{"a":' * 5000 + "1" + "}" * 5000, None, "nesting deeper than 64")
scenario_case("duplicate-key", '{"name": "a", "name": "b"}', "/name", "duplicate key 'name'")
scenario_case("duplicate-key-deep", json.dumps(COLL)[:-1] + ', "workload": {}}', "/workload",
              "duplicate key")
scenario_case("nan", json.dumps(COLL).replace('"count": 2', '"count": NaN'), "/", "not valid JSON")
scenario_case("infinity", json.dumps(COLL).replace('"count": 2', '"count": Infinity'), "/",
              "not valid JSON")
scenario_case("truncated", json.dumps(TRAIN)[:200], "/", "not valid JSON")
scenario_case("empty", "", "/", "not valid JSON")
scenario_case("top-level-array", "[]", "/", "expected an object")
scenario_case("comments", "// c\n" + json.dumps(COLL), "/", "not valid JSON")
scenario_case("trailing-garbage", json.dumps(COLL) + " {}", "/", "not valid JSON")
scenario_case("non-utf8-string", json.dumps(COLL).encode().replace(b'"allreduce', b'"\xff\xfe'), "/",
              "not valid JSON")
scenario_case("non-utf8-binary", b"\x00\x01\x02\xff" * 100, "/", "not valid JSON")
scenario_case("nul-in-string", json.dumps(COLL).replace('allreduce', 'all\\u0000reduce'), "/name",
              "expected 1-128 characters")

# ---- numbers ----
def with_value(doc, path, value):
    d = json.loads(json.dumps(doc))
    o = d
    for k in path[:-1]:
        o = o[k]
    o[path[-1]] = value
    return d


def raw_value(doc, path, raw):
    marker = "__HOSTILE__"
    return json.dumps(with_value(doc, path, marker)).replace('"' + marker + '"', raw)


scenario_case("huge-count", raw_value(COLL, ["cluster", "count"], "1" + "0" * 400), "/",
              "number overflow")
scenario_case("huge-integer", raw_value(COLL, ["cluster", "count"], "99999999999999999999"),
              "/cluster/count", "expected an integer")
scenario_case("count-overflow-int64", raw_value(COLL, ["cluster", "count"], "9223372036854775808"),
              "/cluster/count", "expected an integer")
scenario_case("negative-count", raw_value(COLL, ["cluster", "count"], "-2"), "/cluster/count",
              "expected an integer in")
scenario_case("fractional-count", raw_value(COLL, ["cluster", "count"], "2.5"), "/cluster/count",
              "expected an integer")
scenario_case("negative-seed", raw_value(COLL, ["seed"], "-1"), "/seed", "expected an integer in")
scenario_case("huge-seed", raw_value(COLL, ["seed"], "1e300"), "/seed", "expected an integer")
scenario_case("denormal", raw_value(COLL, ["cluster", "fabric"], '{"oversubscription": 4e-324}'),
              "/cluster/fabric/oversubscription", "expected a number in")
scenario_case("negative-size", raw_value(COLL, ["workload", "sizes"], '["-1GiB"]'),
              "/workload/sizes/0", "negative")
scenario_case("negative-size-int", raw_value(COLL, ["workload", "sizes"], "[-5]"),
              "/workload/sizes/0", "expected a size >= 0")
scenario_case("size-nan-text", raw_value(COLL, ["workload", "sizes"], '["nan GiB"]'),
              "/workload/sizes/0", "expected a size")
scenario_case("size-inf-text", raw_value(COLL, ["workload", "sizes"], '["1e400GB"]'),
              "/workload/sizes/0", "expected a size")
scenario_case("size-too-large", raw_value(COLL, ["workload", "sizes"], '["2PiB"]'),
              "/workload/sizes", "above 1 TiB")
scenario_case("size-range-huge", raw_value(COLL, ["workload", "sizes"],
                                           '{"min": 1, "max": "1TiB", "factor": 2, "x": 1}'),
              "/workload/sizes/x", "unknown key")
scenario_case("too-many-sizes", raw_value(COLL, ["workload", "sizes"], json.dumps([8] * 5000)),
              "/workload/sizes", "at most 4096")
scenario_case("bandwidth-zero", raw_value(COLL, ["cluster", "fabric"], '{"link_bandwidth": "0Gbps"}'),
              "/cluster/fabric/link_bandwidth", "> 0")
scenario_case("time-negative", raw_value(COLL, ["cluster", "fabric"], '{"hop_latency": "-1us"}'),
              "/cluster/fabric/hop_latency", "negative")
scenario_case("time-overflow", raw_value(COLL, ["cluster", "fabric"], '{"hop_latency": "1e9d"}'),
              "/cluster/fabric/hop_latency", "too large")

# ---- limits ----
scenario_case("gpus-over-limit", raw_value(COLL, ["cluster", "count"], "100000"), "/cluster/count",
              "limit is 131072 \\(raise it with --max-gpus\\)")
scenario_case("gpus-over-custom-limit", json.dumps(COLL), "/cluster/count",
              "limit is 8 \\(raise it with --max-gpus\\)", extra=("--max-gpus", "8"))
big_batch = with_value(TRAIN, ["workload", "batch"], {"global": 1 << 24, "micro": 1, "seq_len": 8192})
scenario_case("passes-over-limit", json.dumps(big_batch), "/workload/batch",
              "raise it with --max-passes")
scenario_case("passes-over-custom-limit", json.dumps(TRAIN), "/workload/batch",
              "limit is 100 \\(raise it with --max-passes\\)", extra=("--max-passes", "100"))
scenario_case("trace-over-limit", json.dumps(TRAIN), "/workload/batch",
              "raise it with --max-trace-events",
              extra=("--trace", os.path.join(TMP, "t.json"), "--max-trace-events", "1000"))
# An all-to-all over 16,384 GPUs (268 M flows, ~72 GB of plan): refused in milliseconds.
A2A = with_value(with_value(COLL, ["workload", "operation"], "all_to_all"), ["cluster", "count"], 2048)
scenario_case("flows-over-limit", json.dumps(A2A), "/cluster/count",
              "simulates 268419072 flows per size.*raise it with --max-flows")
scenario_case("flows-over-limit-group", json.dumps(with_value(
    with_value(A2A, ["cluster", "count"], 16384), ["workload", "group"], {"gpus": 131072})),
              "/workload/group", "raise it with --max-flows")
# Limits raised past the machine: the memory estimate still refuses before allocating.
scenario_case("sim-memory-over-limit", json.dumps(A2A), "/cluster/count",
              "about 67.50 GiB of memory.*raise it with --max-sim-memory",
              extra=("--max-flows", "1000000000000"))
scenario_case("sim-memory-passes", json.dumps(big_batch), "/workload/batch",
              "raise it with --max-sim-memory", extra=("--max-passes", "1000000000000"))
# The run example with a gray-failure rate of 7 per GPU-hour, and a million replicas.
RUN = json.load(open("scenarios/run-llama3.1-405b-16k-b200.json"))
gray = json.loads(json.dumps(RUN))
gray["run"]["gray_failures"][0]["rate_per_hour"] = 7
scenario_case("run-events-over-limit", json.dumps(gray), "/run",
              "run-level events.*raise it with --max-run-events")
replicas = json.loads(json.dumps(RUN))
replicas["run"]["replicas"] = 1000000
replicas["run"]["duration"] = "100d"
scenario_case("run-events-replicas", json.dumps(replicas), "/run",
              "raise it with --max-run-events")
PLAN = json.load(open("scenarios/plans/llama3.1-405b-15t.json"))
PLAN["candidates"][0]["counts"] = list(range(1, 5000))
expect_error("plan-candidates-over-limit", ["plan", write("plan-big.json", json.dumps(PLAN)),
                                            "--out", os.path.join(TMP, "plan-out")],
             "/candidates", "combinations; the limit is 4096 \\(raise it with --max-candidates\\)")

# ---- a wrong type at every position of real scenarios ----
def wrong_values(v):
    if isinstance(v, bool):
        return ["true", 1]
    if isinstance(v, (int, float)):
        return ["12", None]
    if isinstance(v, str):
        return [[v], True]
    if isinstance(v, list):
        return [{}, "x"]
    if isinstance(v, dict):
        return [[], 3]
    return [{}]


def positions(v, path=()):
    yield path, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from positions(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from positions(x, path + (i,))


for label, doc in [("collective", COLL), ("training", TRAIN)]:
    for path, v in positions(doc):
        if not path:
            continue
        for w in wrong_values(v)[: 1 if QUICK else 2]:
            ptr = "/" + "/".join(str(p) for p in path)
            # the workload's type selects the key table: a wrong type there is reported at it
            scenario_case(f"type-{label}{ptr.replace('/', '-')}-{type(w).__name__}",
                          json.dumps(with_value(doc, list(path), w)),
                          ptr if path[-1] != "type" else "/workload", None)

# ---- a 100 MB file ----
big = write("big.json", "")
with open(big, "wb") as f:
    f.write(b'{"name": "x", "description": "')
    f.write(b"a" * (100 << 20))
    f.write(b'"}')
expect_error("100MB-scenario", ["run", big], "/", "limit is 16777216 bytes")
bigcsv = write("big.csv", "")
with open(bigcsv, "wb") as f:
    f.write(b"hardware,num_gpus,model,metric_name,metric_value,notes\n")
    f.write(b"H100,8,all_reduce,busbw,1,msg_bytes=" + b"9" * (100 << 20) + b"\n")
expect_error("100MB-csv", ["validate", "--reference", bigcsv], "", "limit is")

# ---- not a regular file: a folder, a device that never ends, a missing path ----
for name, args in [("run", ["run"]), ("validate", ["validate", "--reference"]),
                   ("model-import", ["model", "import"]), ("sweep", ["sweep"]),
                   ("import-trace", ["calibrate", "import-trace"])]:
    # model import takes a checkpoint folder (its config.json); this one holds none.
    folder_msg = "a folder without a config.json" if name == "model-import" else "not a regular file"
    expect_error(f"{name}-folder", args + [TMP], "/", folder_msg, timeout=20)
    expect_error(f"{name}-dev-zero", args + ["/dev/zero"], "/", "not a regular file", timeout=20)
    expect_error(f"{name}-missing", args + [os.path.join(TMP, "missing.json")], "/",
                 "no such file", timeout=20)

# ---- model files ----
model = json.load(open("workloads/models/llama3-8b.json"))
for name, m, ptr, msg in [
        ("model-layers-zero", with_value(model, ["layers"], 0), "/workload/model/layers", "expected"),
        ("model-hidden-huge", with_value(model, ["hidden"], 1 << 40), "/workload/model/hidden", "expected"),
        ("model-heads-negative", with_value(model, ["attention", "heads"], -8),
         "/workload/model/attention/heads", "expected"),
        ("model-unknown-key", with_value(model, ["atention"], {}), "/workload/model/atention",
         "did you mean 'attention'"),
        ("model-moe-bad", with_value(model, ["moe"], {"experts": 0}), "/workload/model/moe", None)]:
    scenario_case(name, json.dumps(with_value(TRAIN, ["workload", "model"], m)), ptr, msg)
mpath = write("model.json", json.dumps(with_value(model, ["vocab"], "lots")))
scenario_case("model-file-bad", json.dumps(with_value(TRAIN, ["workload", "model"], mpath)),
              "/workload/model", None)

# ---- reference CSV ----
HDR = "hardware,num_gpus,model,metric_name,metric_value,notes\n"
for name, text, ptr, msg in [
        ("csv-unterminated-quote", HDR + 'H100,8,"all_reduce,busbw,1,x\n', "line 2", "unterminated"),
        ("csv-ragged", HDR + "H100,8\n", "line 2", "expected 6 fields"),
        ("csv-missing-column", "hardware,num_gpus\nH100,8\n", "line 1", "missing column"),
        ("csv-nul", HDR + "H100,8,all_reduce,busbw,1,x\0\n", "line 2", "NUL byte"),
        ("csv-non-utf8", HDR + "H\xff100,8,all_reduce,busbw,1,x\n", "line 2", "not valid UTF-8"),
        ("csv-empty", "", "line 1", "empty CSV")]:
    data = text.encode("latin-1") if "\xff" in text else text
    expect_error(name, ["validate", "--reference", write(name + ".csv", data)], ptr, msg)


def validate_skips(name, row, reason):
    """Rows fleetsim cannot model are skipped with the reason (exit 0), never a crash."""
    row += "," * (11 - row.count(",")) + ",1"  # pad to the header's 13 fields (mbs 1)
    path = write(name + ".csv", "hardware,num_gpus,model,metric_name,metric_value,notes,gbs,seq_len,"
                 "tp,pp,cp,precision,mbs\n" + row + "\n")
    p = subprocess.run([FLEETSIM, "validate", "--reference", path], capture_output=True, timeout=60)
    out = p.stdout.decode()
    if p.returncode == 0 and re.search(reason, out) and "skipped: 1 rows" in out:
        results["pass"] += 1
    else:
        results["fail"] += 1
        print(f"FAIL {name}: rc={p.returncode}, want 0 and a skip matching {reason!r}")
        print("  " + (p.stderr.decode() + out)[-400:])


validate_skips("csv-gpus-huge", "H100,2000000000,all_reduce,busbw,1,msg_bytes=8,,,,,",
               "above the limit of 131072 GPUs")
validate_skips("csv-gpus-one", "H100,1,all_reduce,busbw,1,msg_bytes=8,,,,,", "at least 2 GPUs")
validate_skips("csv-size-overflow", "H100,8,all_reduce,busbw,1,msg_bytes=" + "9" * 30 + ",,,,,",
               "above 1 TiB")
validate_skips("csv-size-zero", "H100,8,all_reduce,busbw,1,msg_bytes=0,,,,,", "outside")
validate_skips("csv-fsdp-overflow", "DGX-H100,8,LLAMA3_8B,tokens_per_sec_per_gpu,10,"
               "FSDP=99999999999999999999,8,4096,1,2,1,BF16", "configuration not modelled.*(FSDP|fsdp)")
validate_skips("csv-parallel-overflow", "DGX-H100,8,LLAMA3_8B,tokens_per_sec_per_gpu,10,x,8,4096,"
               "16777216,16777216,16,BF16", "does not divide num_gpus")
validate_skips("csv-batch-huge", "DGX-H100,8,LLAMA3_8B,tokens_per_sec_per_gpu,10,x,16777216,4096,"
               "1,8,1,BF16", "raise it with --max-passes")
validate_skips("csv-notes-huge", "H100,8,all_reduce,busbw,1,msg_bytes=1" + "0" * 200000,
               "notes longer than 4096")

# Malformed cells: exit 2 naming the file and line (the other rows are still validated; see
# tests/validate/test_validate_cli.sh).
for name, row, msg in [
        ("csv-gpus-zero", "H100,0,all_reduce,busbw,1,msg_bytes=8", "column 'num_gpus': expected a positive integer"),
        ("csv-gpus-text", "H100,eight,all_reduce,busbw,1,msg_bytes=8", "column 'num_gpus': expected a positive integer"),
        ("csv-value-nan", "H100,8,all_reduce,busbw,nan,msg_bytes=8", "column 'metric_value': expected a finite number"),
        ("csv-step-negative", "DGX-H100,8,LLAMA3_8B,step_time,-1,x", "column 'metric_value': expected a positive step_time")]:
    expect_error(name, ["validate", "--reference", write(name + ".csv", HDR + row + "\n")], "line 2", msg)

print(f"{results['pass']} passed, {results['fail']} failed")
sys.exit(1 if results["fail"] else 0)
