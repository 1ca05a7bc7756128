#!/usr/bin/python3
"""Expert-parallel dispatch / combine rows of validation/moe-host-kernels.csv → the dispatch
benchmark row format of docs/validation.md ("Dispatch benchmark rows"), written to
validation/dispatch-benchmarks.csv.

Every field comes from the row: its kernel / dtype / batch / seq_len / time_us / achieved_gbps
cells and the configuration its `notes` text states. A row whose notes do not state something
the format needs (the GPU, the data type, the token count, the expert-parallel size) is
refused and listed with the reason, never guessed. Facts that a source states once for a whole
table, rather than in each row's notes, are in SOURCE_FACTS below with where the source says
them.

  /usr/bin/python3 validation/convert_dispatch_rows.py            # rewrite the CSV, list refusals
  /usr/bin/python3 validation/convert_dispatch_rows.py --check    # exit 1 if the CSV is stale
  /usr/bin/python3 validation/convert_dispatch_rows.py --refused  # only the refusal list
"""
import csv
import io
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "moe-host-kernels.csv")
OUTPUT = os.path.join(HERE, "dispatch-benchmarks.csv")

COLUMNS = ["source_url", "hardware", "library", "mode", "op", "dtype", "ranks", "gpus_per_node",
           "tokens_per_rank", "hidden", "top_k", "experts", "metric_name", "bw_def",
           "metric_value", "notes"]

# Kernel cells of the reference that are expert-parallel dispatch / combine / all-to-all rows.
KERNELS = {"moe_dispatch": ("dispatch", None), "moe_combine": ("combine", None),
           "moe_dispatch_lowlatency": ("dispatch", "low_latency"),
           "moe_combine_lowlatency": ("combine", "low_latency"),
           "moe_dispatch_internode": ("dispatch", None), "all_to_all": ("all_to_all", None)}

UCCL = "https://github.com/uccl-project/uccl/blob/da914a2054c29725464803e379bb3b98de90dfa1/ep/README.md"
HYBRID = ("https://github.com/deepseek-ai/DeepEP/blob/94a9f8f6b146c07d97ec58f67cd6d303296d6098/"
          "docs/README_Hybrid-EP.md")
TRTLLM = ("https://github.com/NVIDIA/TensorRT-LLM/blob/22de8b34df71bb6653612c1f3de00c7288482eb4/"
          "docs/source/blogs/tech_blog/blog18_Optimizing_MoE_Communication_with_One_Sided_"
          "AlltoAll_Over_NVLink.md")

# Table-level facts of a source (stated once in the source, not in each row's notes).
SOURCE_FACTS = {
    # UCCL-EP ep/README.md, "Benchmark": the intranode test runs --num-experts 256, the
    # internode normal and low-latency tests --num-experts=288 (bench/test_*.py commands).
    (UCCL, "intranode"): {"experts": 256},
    (UCCL, "internode"): {"experts": 288},
    # The normal-mode tests give the kernels 24 SMs on CUDA (bench/test_intranode.py
    # `num_sms = 24 if torch.version.cuda else 64`, bench/test_internode.py `num_sms = 24`; the
    # same at the commits that wrote the p5en and p6-b200 tables, bd7e82a6 and b9ef2050).
    (UCCL, "normal"): {"sms": 24},
}

# Rows whose hardware cell contradicts their source, with the source's own statement. UCCL-EP
# README, "Low-latency kernels with pure RDMA": the second table (EP16 226 / 293 us, EP24 386 /
# 580 us, EP32 465 / 694 us) is headed "On p5en ... 8x H200 + 16x 200Gb/s EFA"; the reference
# rows repeat the p6-b200 table's hardware cell.
P5EN_LL = {(16, "dispatch", 226.0), (16, "combine", 293.0), (24, "dispatch", 386.0),
           (24, "combine", 580.0), (32, "dispatch", 465.0), (32, "combine", 694.0)}
P5EN = "H200 (AWS p5en, 16x200Gb/s EFA)"


class Refuse(Exception):
    pass


def need(pattern, text, what, flags=0):
    m = re.search(pattern, text, flags)
    if not m:
        raise Refuse(what + " not stated in notes")
    return m


def num(s):
    x = float(s)
    return str(int(x)) if x == int(x) else repr(x)


def gpu_family(hw):
    for fam in ("GB200", "B200", "H200", "H100"):
        if hw.startswith(fam):
            return fam
    raise Refuse("GPU '%s' is not a GPU the row format names (H100, H200, B200, GB200)" % hw)


def hybrid_ep(row, notes):
    """DeepEP docs/README_Hybrid-EP.md tables (HybridEP and the DeepEP comparison rows)."""
    out = {}
    ranks = int(need(r"(\d+) ranks", notes, "rank count").group(1))
    out["ranks"] = ranks
    sms = need(r"SM count=(\d+)", notes, "SM count").group(1)
    if re.search(r"Torch API", notes, re.I):
        api = "torch"
    elif re.search(r"kernel only|only kernel time", notes, re.I):
        api = "kernel"
    else:
        raise Refuse("measurement type (Torch API or kernel only) not stated in notes")
    out["tokens_per_rank"] = int(need(r"tokens/rank=(\d+)", notes, "tokens per rank").group(1))
    out["hidden"] = int(need(r"hidden=(\d+)", notes, "hidden size").group(1))
    out["top_k"] = int(need(r"topk=(\d+)", notes, "top-k").group(1))
    local = int(need(r"(\d+) local experts/rank", notes, "experts per rank").group(1))
    out["experts"] = local * ranks
    routing = "uniform" if "random-uniform" in notes else None
    if routing is None:
        raise Refuse("router not stated in notes")
    out["library"] = "deepep" if notes.startswith("DeepEP ") else "hybridep"
    out["mode"] = "normal"
    fam = gpu_family(row["gpu"])
    if "IB Bandwidth" in notes:
        m = need(r"= (\d+) nodes assuming (\d+) GPUs/node", notes, "nodes")
        out["gpus_per_node"] = int(m.group(2))
        if int(m.group(1)) * int(m.group(2)) != ranks:
            raise Refuse("nodes x GPUs/node does not give the rank count")
        # The README heads this table "IB Bandwidth in GB/s": DeepEP's convention for RDMA
        # bandwidth (tests/test_internode.py: tokens x destination nodes, own node included).
        bw_def = "rdma_node_copies"
        scale = "ib"
    elif "MNNVL" in notes or "on GB200 NVL72" in notes:
        out["gpus_per_node"] = 4  # GB200 compute tray; the NVL72 domain joins 18 of them
        bw_def = "rank_copies"
        scale = "mnnvl"
    elif re.search(r"in one \w+ node", notes):
        out["gpus_per_node"] = ranks
        bw_def = "rank_copies"
        scale = "nvlink"
    else:
        raise Refuse("placement (one node, IB or MNNVL) not stated in notes")
    if scale == "mnnvl" and fam != "GB200":
        raise Refuse("MNNVL row on a GPU without a multi-node NVLink domain")
    out["knobs"] = ["api=" + api, "sms=" + sms, "routing=" + routing, "scale_up=" + scale]
    out["bw_def"] = bw_def
    return out


def uccl_ep(row, notes):
    """UCCL-EP ep/README.md "Results" tables."""
    out = {"library": "uccl-ep"}
    if "normal (high-throughput)" in notes:
        out["mode"] = "normal"
    elif "low-latency kernels" in notes:
        out["mode"] = "low_latency"
    else:
        raise Refuse("kernel mode (normal or low-latency) not stated in notes")
    out["ranks"] = int(need(r"EP=(\d+)", notes, "expert-parallel size").group(1))
    out["tokens_per_rank"] = int(need(r"(\d+) tokens/batch", notes, "tokens per rank").group(1))
    out["hidden"] = int(need(r"hidden (\d+)", notes, "hidden size").group(1))
    out["top_k"] = int(need(r"top-(\d+)(?: experts|,)", notes, "top-k").group(1))
    intra = "intranode NVLink" in notes
    out["experts"] = SOURCE_FACTS[(UCCL, "intranode" if intra else "internode")]["experts"]
    out["gpus_per_node"] = 8
    if out["mode"] == "low_latency":
        out["bw_def"] = "pairs"  # DeepEP tests/test_low_latency.py: token-expert pairs x bytes
        placement = "rdma"
    elif intra:
        out["bw_def"] = "rank_copies"  # "(NVLink)": test_intranode.py's NVL receive bytes
        placement = "nvlink"
    else:
        out["bw_def"] = "rdma_node_copies"  # "(RDMA)": test_internode.py's RDMA bytes
        placement = "rdma"
    out["knobs"] = ["api=torch", "routing=uniform", "experts_from=README benchmark command",
                    "path=" + placement]
    if out["mode"] == "normal":
        out["knobs"].append("sms=%d" % SOURCE_FACTS[(UCCL, "normal")]["sms"])
        out["knobs"].append("sms_from=bench/test_*.py")
    # Low latency: "pure RDMA" means no NVLink forwarding, not RDMA inside a node. The kernel
    # copies an intra-node pair through CUDA IPC (src/internode_ll.cu, get_ipc_p2p_ptr) and the
    # proxy aborts on an intra-node command (src/proxy.cpp "Intra-node command!"), at the
    # tables' commits as at the pinned one, so these rows keep NVLink (no nvlink=false).
    return out


def nvlink_one_sided(row, notes):
    """TensorRT-LLM blog 18 (NVLinkOneSided AlltoAll) tables."""
    if "presumed" in notes:
        raise Refuse("expert-parallel size presumed by the transcriber ('EP=8 presumed')")
    m = need(r"EP=(\d+), (\d+) tokens/rank", notes, "EP size and tokens per rank")
    out = {"library": "nvlink-one-sided", "mode": "normal", "ranks": int(m.group(1)),
           "tokens_per_rank": int(m.group(2))}
    prof = need(r"hidden (\d+), top-(\d+), (\d+) experts", notes, "model profile")
    out["hidden"], out["top_k"], out["experts"] = (int(prof.group(i)) for i in (1, 2, 3))
    if "perfect router" not in notes:
        raise Refuse("router not stated in notes")
    if not row["gpu"].startswith("GB200 NVL72"):
        raise Refuse("hardware '%s' is not the GB200 NVL72 the tables name" % row["gpu"])
    out["gpus_per_node"] = 4
    out["bw_def"] = "logical"  # batch x min(ep, top_k) x bytes per token / latency
    out["knobs"] = ["api=kernel", "routing=perfect", "scale_up=mnnvl"]
    return out


def convert(row):
    """Converted rows for one reference row, or Refuse(reason)."""
    notes, url = row["notes"], row["source_url"]
    if url == HYBRID:
        cfg = hybrid_ep(row, notes)
    elif url == UCCL:
        cfg = uccl_ep(row, notes)
    elif url == TRTLLM:
        cfg = nvlink_one_sided(row, notes)
    elif "pplx-kernels" in url:
        raise Refuse("GPU SKU and benchmark configuration not stated (pplx README table)")
    elif "performance-guide" in url:
        raise Refuse("tokens per rank, hidden size and data type not stated")
    elif "arxiv.org/abs/2603.07685" in url:
        raise Refuse("data type not stated; a third-party transcription not checked against "
                     "the paper")
    elif "marin" in url:
        raise Refuse("XLA ragged all-to-all with no EP size, token count or hidden size")
    else:
        raise Refuse("no reader for this source")
    op, mode = KERNELS[row["kernel"]]
    if op == "all_to_all":
        raise Refuse("all-to-all row of a source without a reader")
    if mode and cfg["mode"] != mode:
        raise Refuse("kernel '%s' contradicts the notes' mode" % row["kernel"])
    dtype = row["dtype"]
    if dtype not in ("bf16", "fp8"):
        raise Refuse("data type '%s' not one the format names (bf16, fp8)" % dtype)
    hw = row["gpu"]
    if url == UCCL and cfg["mode"] == "low_latency" and \
            (cfg["ranks"], op, float(row["time_us"])) in P5EN_LL:
        hw = P5EN
        cfg["knobs"].append("hardware_from=README 'On p5en' low-latency table")
    gpu_family(hw)
    base = {"source_url": url, "hardware": hw, "library": cfg["library"], "mode": cfg["mode"],
            "op": op, "dtype": dtype, "ranks": cfg["ranks"],
            "gpus_per_node": cfg["gpus_per_node"], "tokens_per_rank": cfg["tokens_per_rank"],
            "hidden": cfg["hidden"], "top_k": cfg["top_k"], "experts": cfg["experts"]}
    out = []
    for metric, cell, bw_def in (("time_us", "time_us", ""),
                                 ("bandwidth_gbps", "achieved_gbps", cfg["bw_def"])):
        if row[cell]:
            r = dict(base, metric_name=metric, bw_def=bw_def, metric_value=num(row[cell]),
                     notes=" ".join(cfg["knobs"] + ["ref_line=%d" % row["_line"]]))
            out.append(r)
    if not out:
        raise Refuse("neither time_us nor achieved_gbps given")
    return out


def run():
    with open(SOURCE, newline="") as f:
        reader = csv.DictReader(f)
        rows = []
        for row in reader:
            row["_line"] = reader.line_num
            rows.append(row)
    converted, refused = [], []
    for row in rows:
        if row["kernel"] not in KERNELS:
            continue
        try:
            converted.extend(convert(row))
        except Refuse as e:
            refused.append((row["_line"], row["kernel"], row["gpu"], str(e)))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in converted:
        w.writerow(r)
    return buf.getvalue(), refused


def main(argv):
    text, refused = run()
    if "--check" in argv:
        with open(OUTPUT, newline="") as f:
            if f.read() != text:
                print("validation/dispatch-benchmarks.csv differs from the converter's output; "
                      "run /usr/bin/python3 validation/convert_dispatch_rows.py", file=sys.stderr)
                return 1
        return 0
    if "--refused" not in argv:
        with open(OUTPUT, "w", newline="") as f:
            f.write(text)
        print("%d rows written to %s" % (text.count("\n") - 1, os.path.relpath(OUTPUT)))
    print("refused %d rows:" % len(refused))
    for line, kernel, gpu, why in refused:
        print("  line %d %s (%s): %s" % (line, kernel, gpu, why))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
