"""Writers of PyTorch profiler (Kineto) Chrome traces for the import-trace tests: the event layout
torch.profiler exports (traceEvents with ph "X" events of cat cpu_op / cuda_runtime / kernel /
gpu_memcpy / user_annotation, args "Input Dims", "Input type", "External id", "correlation",
"stream", record_param_comms' "Collective name" / "In msg nelems" / "Group size" / "dtype"), a
deviceProperties entry, and every launch inside the CPU op that issues it."""
import json


class Trace:
    def __init__(self, device="NVIDIA H100 80GB HBM3"):
        self.events = []
        self.corr = 0
        self.ext = 0
        self.device = device

    def step(self, n, ts, dur):
        self.events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}",
                            "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": {"External id": 0}})

    def op(self, name, ts, dur, dims=None, types=None, extra=None):
        """A CPU op; returns its args (so callers may add to them)."""
        self.ext += 1
        args = {"External id": self.ext, "Record function id": 0, "Ev Idx": self.ext}
        if dims is not None:
            args["Input Dims"] = dims
            args["Input type"] = types or ["c10::BFloat16"] * len(dims)
        args.update(extra or {})
        self.events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1,
                            "ts": ts, "dur": dur, "args": args})
        return args

    def launch(self, ts, kernel, kts, kdur, stream=7, kargs=None, cat="kernel", launch_dur=4.0):
        """cudaLaunchKernel at ts (inside the current op) and its kernel at kts on `stream`."""
        self.corr += 1
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                            "pid": 1, "tid": 1, "ts": ts, "dur": launch_dur,
                            "args": {"External id": self.ext, "cbid": 211,
                                     "correlation": self.corr}})
        args = {"External id": self.ext, "queued": 0, "device": 0, "context": 1,
                "stream": stream, "correlation": self.corr}
        args.update(kargs or {})
        self.events.append({"ph": "X", "cat": cat, "name": kernel, "pid": 0, "tid": stream,
                            "ts": kts, "dur": kdur, "args": args})

    def dump(self):
        doc = {"schemaVersion": 1,
               "deviceProperties": [{"id": 0, "name": self.device, "totalGlobalMem": 85045379072,
                                     "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
               "traceEvents": self.events,
               "traceName": "fleetsim test trace", "displayTimeUnit": "ms",
               "baseTimeNanoseconds": 1700000000000000000}
        return json.dumps(doc, indent=1)
