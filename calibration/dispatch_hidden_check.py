#!/usr/bin/python3
"""What the one dispatch measurement at a small hidden size says about the dispatch model.

The dispatch model's parameters (calibration/fit_dispatch.py) are fitted on kernel benchmarks
that all run hidden 7168. validation/moe-component-measured.csv has one component-level number at
hidden 2048: Qwen3-30B-A3B on 16 H100 (2 DGX-H100), HybridEP, BF16, EP 16, 4,096 tokens per rank,
top-8 of 128 experts, rank-0 Nsight, communication kernels 8.254 s per step (7.9-8.6 s within the
printed precision) over 48 layers x 64 micro-batches x 4 calls = 12,288 calls. fleetsim's own
routing-map all-gather (0.458 s) and DP collectives (0.037 s) of that step are taken out (both
from `fleetsim run scenarios/qwen3-30b-a3b-h100-hybridep.json`, collective_time_s: ep 5.569 s =
12,288 x 0.4159 ms + 0.458 s; dp 0.037 s), leaving the HybridEP calls.

This prints (1) the model's terms for that call at 16 and 32 SMs (Megatron-Bridge's recipes give
HybridEP 32), (2) the bound the hidden-7168 H100 EP 16 rows at 4 SMs put on any SM-side term,
(3) HybridEP's c_tok / r_sm split moved along the line the hidden-7168 rows fix, and (4) with --fits, the fit of fit_dispatch.py with the call added as a fitting row at weight 0, 1
and 30 (30 makes the fit match it), for the model as it is and for the model with one more
parameter, n_msg, a cost per RDMA copy on the NIC path of normal-mode calls. The figures are in
docs/validation.md ("Component check: Qwen3-30B-A3B on 16 H100").

  /usr/bin/python3 calibration/dispatch_hidden_check.py [--fits]   (--fits: ~6 minutes)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fit_dispatch as F  # noqa: E402

CALLS = 48 * 64 * 4
COMM_S, COMM_LO_S, COMM_HI_S = 8.254, 7.9, 8.6  # moe-component-measured.csv, comm_time_s
OTHER_S = 0.458 + 0.037  # fleetsim's routing-map all-gather + DP collectives of the same step
MEASURED_US = (COMM_S - OTHER_S) / CALLS * 1e6
RANGE_US = ((COMM_LO_S - OTHER_S) / CALLS * 1e6, (COMM_HI_S - OTHER_S) / CALLS * 1e6)


def component_call(op, sms, hidden=2048):
    r = dict(hardware="H100", library="hybridep", mode="normal", op=op, dtype="bf16", ranks="16",
             gpus_per_node="8", tokens_per_rank="4096", hidden=str(hidden), top_k="8",
             experts="128", metric_name="time_us", metric_value="%.1f" % MEASURED_US, bw_def="",
             notes="sms=%d api=kernel routing=uniform" % sms)
    return F.row_facts(r)


def terms(f, X):
    """The normal-mode HybridEP terms of fit_dispatch.predict, in us."""
    s, R, T, D, N, copy = f["s"], f["R"], f["T"], f["D"], f["N"], f["copy"]
    sms = int(f["kn"]["sms"])
    comb = X["h_comb"] if f["comb"] else 1.0
    return dict(
        nvlink=(D - 1) * R / D * T * f["pr"] * copy / (s["nvl"] * X["h_eta"]) * 1e6,
        nic=(N - 1) * T * f["pd"] * copy / (s["nic_flow"] * X["eta_net"]) * 1e6,
        sm_copies=f["recv"] * X["h_c"] / sms * comb,
        sm_bytes=f["recv"] * copy / X["h_r"] / 1e3 / sms * comb,
        rdma_copies=f["node"] * X["h_cr"] / sms,
        rdma_bytes=f["node"] * copy / X["h_rr"] / 1e3 / sms)


def committed():
    """sim/coll/dispatch.cpp's table, in fit_dispatch.NAMES order."""
    return dict(zip(F.NAMES, [0.2367, 34.64, 1.213, 0.6717, 0.2377, 167.6, 1.028, 0.6857, 0.4724,
                              20.41, 0.7782, 0.8402, 1.114, 122.5, 54.56, 4.263, 0.07316, 12.24]))


NAMES_MSG = F.NAMES + ["n_msg"]
X0_MSG = F.X0 + [0.02]


def predict_msg(f, X):
    """fit_dispatch.predict with n_msg us per RDMA copy a rank sends (normal mode, across
    domains) added to the NIC term."""
    if f["ll"] or f["lib"] == "nvlink-one-sided" or f["N"] <= 1:
        return F.predict(f, X)
    p = "h" if f["lib"] == "hybridep" else "d"
    api = 0.0
    if f["kn"].get("api") == "torch":
        api = (X["t_api"] + 2 * f["recv"] * f["copy"] / f["s"]["hbm"] * 1e6 if p == "h"
               else X["t_api_deepep"])
    core = F.predict(f, X) - X["t_call"] - api
    s = f["s"]
    remote = (f["N"] - 1) * f["T"] * f["pd"]
    nic = remote * f["copy"] / (s["nic_flow"] * X["eta_net"]) * 1e6 + remote * X["n_msg"]
    return X["t_call"] + max(core, nic) + api


def mape(rows, facts, X, model):
    e = []
    for f, r in zip(facts, rows):
        t = model(f, X)
        e.append(abs((f["t"] / t - 1) if r["metric_name"] == "bandwidth_gbps" else (t / f["t"] - 1)))
    return 100 * sum(e) / len(e)


def split(rows, facts, X):
    """HybridEP's c_tok / r_sm moved along the line that keeps the SM cost per BF16 copy at hidden
    7168 (14,336 B) fixed, the other parameters as committed: how much the 120 HybridEP rows
    prefer one split, and what it does to a call inside one NVLink domain at hidden 2048."""
    per_copy = X["h_c"] + 14336 / X["h_r"] / 1e3
    hy = [(f, r) for f, r in zip(facts, rows) if r["library"] == "hybridep"]
    call = F.row_facts(dict(hardware="B200", library="hybridep", mode="normal", op="dispatch",
                            dtype="bf16", ranks="8", gpus_per_node="8", tokens_per_rank="4096",
                            hidden="2048", top_k="8", experts="128", metric_name="time_us",
                            metric_value="1", bw_def="", notes="sms=32 api=kernel"))
    print("committed: c_tok is %.0f %% of the SM cost per copy at hidden 7168" %
          (100 * X["h_c"] / per_copy))
    for share in (1.0, 0.8, 0.6, 0.4, 0.2):
        Y = dict(X, h_c=per_copy * share)
        Y["h_r"] = 14336 / ((per_copy - Y["h_c"]) * 1e3) if share < 1 else 1e12
        loss = sum(abs(F.math.log(F.predict(f, Y) / f["t"])) for f, _ in hy)
        print("c_tok %3.0f %% of it (c_tok %.3f us, r_sm %.4g GB/s): HybridEP rows MAPE %.2f %%, "
              "summed |log| %.2f; B200 EP 8 hidden-2048 BF16 dispatch at 32 SMs %.0f us" % (
                  100 * share, Y["h_c"], Y["h_r"], mape([r for _, r in hy], [f for f, _ in hy],
                                                        Y, F.predict), loss,
                  F.predict(call, Y)))


def main():
    X = committed()
    print("measured per call: %.0f us (%.0f-%.0f)" % ((MEASURED_US,) + RANGE_US))
    for sms in (16, 32):
        for op in ("dispatch", "combine"):
            f = component_call(op, sms)
            t = terms(f, X)
            print("model, %2d SMs, %-8s: %.0f us = t_call %.1f + max(%s)" % (
                sms, op, F.predict(f, X), X["t_call"],
                ", ".join("%s %.0f" % (k, v) for k, v in
                          (("NVLink", t["nvlink"]), ("NIC", t["nic"]),
                           ("SM %.0f copies + %.0f bytes" % (t["sm_copies"], t["sm_bytes"]),
                            t["sm_copies"] + t["sm_bytes"]),
                           ("RDMA-SM %.0f copies + %.0f bytes" % (t["rdma_copies"],
                                                                 t["rdma_bytes"]),
                            t["rdma_copies"] + t["rdma_bytes"])))))
    # Any SM-side cost per copy is at most its hidden-7168 value (c >= 0, r > 0) and scales as
    # 1 / SMs, so the 4-SM kernel-only rows of the same layout bound it at 32 SMs.
    rows, facts, fit_facts = F.load()
    four = [f for f, r in zip(facts, rows)
            if r["library"] == "hybridep" and r["hardware"] == "H100" and f["R"] == 16 and
            f["kn"].get("sms") == "4" and f["kn"].get("api") == "kernel" and r["dtype"] == "bf16"]
    for f in four:
        print("bound from the 4-SM BF16 %-8s row (%.0f us): SM-side terms <= %.0f us at 32 SMs" % (
            "combine" if f["comb"] else "dispatch", f["t"], f["t"] * 4 / 32))
    split(rows, facts, X)
    if "--fits" not in sys.argv:
        return
    extra = [component_call(op, 32) for op in ("dispatch", "combine")]
    for label, model, names, x0 in (("model as it is", F.predict, F.NAMES, F.X0),
                                    ("with n_msg", predict_msg, NAMES_MSG, X0_MSG)):
        for w in (0, 1, 30):
            Xw = F.fit(fit_facts, extra, w, model, names, x0)
            print("%-15s weight %2d: %s; component %.0f us; MAPE %.2f %% over %d rows" % (
                label, w, " ".join("%s=%.4g" % (k, Xw[k]) for k in names), model(extra[0], Xw),
                mape(rows, facts, Xw, model), len(rows)))


if __name__ == "__main__":
    main()
