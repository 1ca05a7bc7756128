#!/usr/bin/python3
"""Megatron-Bridge performance-recipe layouts per NeMo release, as data.

Writes calibration/recipe-layouts.csv: for every NeMo release that calibration/releases.json
maps to a Megatron-Bridge tag ("stack": "Megatron-Bridge X", "recipes": "vX (...)"), the
parallel layout and batch of each performance recipe of that tag for the model families of
MODELS below, and for a release whose "finetune_stack" is "NeMo-Framework-Launcher T" the
fine-tuning examples of the launcher's tag T (--launcher), read from the tags' files:

  v0.1.0rc3           scripts/performance/configs/<family>/<model>_llm_pretrain.yaml
                      (perf_matrix: gpu -> num_gpus_N -> common + per-precision keys)
  v0.2.0              scripts/performance/configs/<family>/workload_base_configs.py
  v0.3.0 .. v0.5.x    scripts/performance/configs/<family>/*_workload_base_configs.py
                      (module-level `NAME = WorkloadBaseConfig(...)` / `replace(BASE, ...)`,
                      defaults from the WorkloadBaseConfig dataclass of
                      scripts/performance/utils/utils.py at the same tag)
  launcher 24.07      examples/peft/llama/h100/*.sh (one `python3 .../main.py peft=llama/sft
                      peft.model.X=... peft.trainer.Y=...` call each: Llama 2 SFT, and LoRA
                      where peft.model.peft.peft_scheme=lora)
  v0.6.0 and later    src/megatron/bridge/perf_recipes/<family>/<gpu>/*.py
                      (one function per recipe: `cfg.model.X = ...` / `cfg.train.X = ...`
                      statements, `cfg = other_recipe()` / `_with_global_batch_size(other(), N)`
                      inherited; a field the function does not set comes from the model's
                      library recipe and is left empty here)

The Python files are parsed with the ast module, never imported or executed. Run by hand:

  /usr/bin/python3 calibration/extract_recipe_layouts.py \
      --bridge /path/to/Megatron-Bridge.git --launcher /path/to/NeMo-Framework-Launcher.git \
      [--out calibration/recipe-layouts.csv]

(`--bridge` and `--launcher` are git directories, bare or not; files are read with `git show
TAG:PATH`). The build and the tests read only the committed CSV (sim/validate/recipe_layouts.cpp),
never a mirror.

Columns: release (calibration/releases.json name), tag (the stack's tag: Megatron-Bridge
"v0.3.1", NeMo-Framework-Launcher "24.07"), task (pretrain / sft / lora),
model (fleetsim zoo name), gpu (fleetsim's GPU model: H100, B200, GB300, ...), precision
(fleetsim's recipe: bf16, fp8_cs, fp8_ds, fp8_blk, mxfp8, nvfp4), variant (v1 / v2 / ... or
empty), config (the recipe's name in its file), num_gpus, tp, pp, cp, vp, ep, etp, mbs, gbs,
fsdp (0 / 1), cpu_offload_layers, recompute_layers, recompute_modules (space separated), source
(path@tag). An empty cell is a value the recipe does not state (the model's library recipe or
the command line decides it); vp 1 is no virtual pipeline.
"""

import argparse
import ast
import csv
import io
import json
import os
import re
import subprocess
import sys

import yaml

# Bridge recipe model names -> fleetsim zoo models (the families of NVIDIA's throughput tables).
MODELS = {
    "llama3_8b": "llama3-8b",
    "llama3_70b": "llama3-70b",
    "llama31_405b": "llama3.1-405b",
    "qwen3_30b_a3b": "qwen3-30b-a3b",
    "deepseek_v3": "deepseek-v3",
    "nemotron_3_nano": "nemotron3-nano-30b-a3b",
}

# Bridge precision names (compute_dtype) -> fleetsim's PrecisionRecipe names (workload/parallel.h).
PRECISIONS = {
    "bf16": "bf16",
    "fp8_cs": "fp8_cs",
    "fp8cs": "fp8_cs",
    "fp8_ds": "fp8_ds",
    "fp8_mx": "mxfp8",
    "fp8mx": "mxfp8",
    "fp8_sc": "fp8_blk",
    "fp8sc": "fp8_blk",
    "nvfp4": "nvfp4",
}

GPUS = ("h100", "h200", "b200", "b300", "gb200", "gb300")

# WorkloadBaseConfig / ConfigContainer field -> column.
FIELDS = {
    "num_gpus": "num_gpus",
    "tensor_model_parallel_size": "tp",
    "pipeline_model_parallel_size": "pp",
    "context_parallel_size": "cp",
    "virtual_pipeline_model_parallel_size": "vp",
    "expert_model_parallel_size": "ep",
    "expert_tensor_parallel_size": "etp",
    "micro_batch_size": "mbs",
    "global_batch_size": "gbs",
    "use_megatron_fsdp": "fsdp",
    "cpu_offloading_num_layers": "cpu_offload_layers",
    "recompute_num_layers": "recompute_layers",
    "recompute_modules": "recompute_modules",
}
YAML_FIELDS = {
    "tp": "tp",
    "pp": "pp",
    "cp": "cp",
    "vp": "vp",
    "ep": "ep",
    "etp": "etp",
    "mbs": "mbs",
    "gbs": "gbs",
    "use_megatron_fsdp": "fsdp",
    "cpu_offloading_num_layers": "cpu_offload_layers",
    "recompute_num_layers": "recompute_layers",
    "recompute_modules": "recompute_modules",
}
COLUMNS = [
    "release", "tag", "task", "model", "gpu", "precision", "variant", "config",
    "num_gpus", "tp", "pp", "cp", "vp", "ep", "etp", "mbs", "gbs", "fsdp",
    "cpu_offload_layers", "recompute_layers", "recompute_modules", "source",
]


def git(bridge, *args):
    return subprocess.run(["git", "-C", bridge, *args], check=True, capture_output=True,
                          text=True).stdout


def cell(column, value):
    """A field's value as its CSV cell (an explicit None of virtual_pipeline_model_parallel_size
    is no virtual pipeline: 1)."""
    if column == "vp" and value is None:
        return "1"
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        return " ".join(str(x) for x in value)
    return str(value)


def split_name(name, style):
    """(model, task, gpu, precision, variant) of a recipe name, or None when it is not one."""
    n = name.lower()
    gpu_re = "|".join(GPUS)
    prec_re = "|".join(sorted(PRECISIONS, key=len, reverse=True))
    if style == "v3":  # LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_MX_V1
        m = re.fullmatch(rf"([a-z0-9_]+?)_(pretrain|sft|lora)_config_({gpu_re})_({prec_re})"
                         rf"(?:_(v\d+))?", n)
        if not m:
            return None
        return m.group(1), m.group(2), m.group(3), m.group(4), m.group(5) or ""
    if style == "v2":  # LLAMA3_70B_GB300_FP8_MX_BASE_CONFIG, LLAMA3_70B_GB300_SFT_FP8_CS_...
        m = re.fullmatch(rf"([a-z0-9_]+?)_({gpu_re})_(?:(sft|lora)_)?({prec_re})_base_config", n)
        if not m:
            return None
        return m.group(1), m.group(3) or "pretrain", m.group(2), m.group(4), ""
    # v0.6.0: llama3_70b_pretrain_64gpu_gb300_fp8mx_config
    m = re.fullmatch(rf"([a-z0-9_]+?)_(pretrain|sft|peft)_(\d+)gpu_({gpu_re})_({prec_re})_config", n)
    if not m:
        return None
    task = "lora" if m.group(2) == "peft" else m.group(2)
    return m.group(1), task, m.group(4), m.group(5), ""


def literal(node, constants):
    try:
        return ast.literal_eval(node)
    except ValueError:
        if isinstance(node, ast.Name) and node.id in constants:
            return constants[node.id]
        raise


def dataclass_defaults(source):
    """Field defaults of the WorkloadBaseConfig dataclass in utils/utils.py."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == "WorkloadBaseConfig":
            out = {}
            for st in node.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                    out[st.target.id] = None if st.value is None else ast.literal_eval(st.value)
            return out
    raise SystemExit("no WorkloadBaseConfig dataclass in utils/utils.py")


def workload_base_configs(source, defaults, path):
    """name -> fields of each module-level WorkloadBaseConfig(...) / replace(BASE, ...)."""
    env, constants = {}, {}
    for node in ast.parse(source, path).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and
                isinstance(node.targets[0], ast.Name)):
            continue
        name, value = node.targets[0].id, node.value
        if isinstance(value, ast.Name) and value.id in env:
            env[name] = dict(env[value.id])
            continue
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
            try:
                constants[name] = ast.literal_eval(value)
            except ValueError:
                pass
            continue
        if value.func.id == "WorkloadBaseConfig":
            fields = dict(defaults)
        elif value.func.id == "replace" and value.args and isinstance(value.args[0], ast.Name):
            if value.args[0].id not in env:
                sys.exit(f"{path}: {name} replaces unknown {value.args[0].id}")
            fields = dict(env[value.args[0].id])
        else:
            continue
        for kw in value.keywords:
            if kw.arg is None:
                fields.update(literal(kw.value, constants))
            else:
                fields[kw.arg] = literal(kw.value, constants)
        env[name] = fields
    return env


def attribute_path(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def perf_recipe_functions(source, path, known):
    """name -> fields of each `def NAME() -> ConfigContainer` in a v0.6.0+ perf_recipes file.

    `known` holds the functions already read (a recipe may start from another one)."""
    tree = ast.parse(source, path)
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    out = {}

    def read(name, depth=0):
        if name in out:
            return out[name]
        if name in known:
            return known[name]
        if name not in funcs or depth > 8:
            return None
        fields = {}
        for st in funcs[name].body:
            if isinstance(st, ast.Assign) and len(st.targets) >= 1:
                value = st.value
                for target in st.targets:
                    if isinstance(target, ast.Name) and target.id == "cfg":
                        call = value
                        gbs = None
                        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and
                                call.func.id == "_with_global_batch_size" and len(call.args) == 2):
                            gbs = ast.literal_eval(call.args[1])
                            call = call.args[0]
                        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and
                                not call.args):
                            base = read(call.func.id, depth + 1)
                            if base is not None:
                                fields = dict(base)
                        if gbs is not None:
                            fields["global_batch_size"] = gbs
                        continue
                    p = attribute_path(target)
                    if p is None:
                        continue
                    parts = p.split(".")
                    if parts[0] != "cfg" or parts[-1] not in FIELDS:
                        continue
                    try:
                        fields[parts[-1]] = ast.literal_eval(value)
                    except ValueError:
                        fields[parts[-1]] = "?"
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                call = st.value
                if (isinstance(call.func, ast.Name) and call.func.id == "_with_global_batch_size"
                        and len(call.args) == 2):
                    fields["global_batch_size"] = ast.literal_eval(call.args[1])
        out[name] = fields
        return fields

    for name in funcs:
        read(name)
    return out


def row(release, tag, parsed, fields, config, source, num_gpus=None):
    model, task, gpu, prec, variant = parsed
    r = {"release": release, "tag": tag, "task": task, "model": MODELS[model],
         "gpu": gpu.upper(), "precision": PRECISIONS[prec], "variant": variant, "config": config,
         "source": f"{source}@{tag}"}
    for key, column in FIELDS.items():
        if key in fields:
            r[column] = cell(column, fields[key])
        else:
            r.setdefault(column, "")
    if num_gpus is not None:
        r["num_gpus"] = str(num_gpus)
    return r


def read_tag(bridge, release, tag):
    files = git(bridge, "ls-tree", "-r", "--name-only", tag).splitlines()
    rows = []
    perf = sorted(f for f in files if f.startswith("src/megatron/bridge/perf_recipes/") and
                  re.search(r"/(" + "|".join(GPUS) + r")/[^/]+\.py$", f))
    wbc = sorted(f for f in files if f.startswith("scripts/performance/configs/") and
                 f.endswith("workload_base_configs.py"))
    yml = sorted(f for f in files if f.startswith("scripts/performance/configs/") and
                 f.endswith("_llm_pretrain.yaml"))
    if perf:
        known = {}
        for f in perf:
            # a file's recipes may start from those of another file of the same family
            funcs = perf_recipe_functions(git(bridge, "show", f"{tag}:{f}"), f, known)
            for name, fields in funcs.items():
                known.setdefault(name, fields)
                parsed = split_name(name, "v6")
                if parsed and parsed[0] in MODELS and fields:
                    n = int(re.search(r"_(\d+)gpu_", name).group(1))
                    rows.append(row(release, tag, parsed, fields, name, f, num_gpus=n))
        return rows, "src/megatron/bridge/perf_recipes/<family>/<gpu>/*.py"
    if wbc:
        defaults = dataclass_defaults(git(bridge, "show", f"{tag}:scripts/performance/utils/utils.py"))
        style = "v2" if any(os.path.basename(f) == "workload_base_configs.py" for f in wbc) else "v3"
        for f in wbc:
            for name, fields in workload_base_configs(git(bridge, "show", f"{tag}:{f}"), defaults,
                                                      f).items():
                parsed = split_name(name, style)
                if parsed and parsed[0] in MODELS:
                    fields = dict(fields)
                    # The scripts copy every field onto the recipe (utils/overrides.py
                    # set_workload_base_configs, v0.2.0 utils/helpers.py): an expert TP of None
                    # is Megatron-Core's default, the TP. use_megatron_fsdp is applied only
                    # when true (_set_megatron_fsdp_overrides returns otherwise): else the
                    # library recipe's, not stated here.
                    if fields.get("expert_tensor_parallel_size") is None:
                        fields["expert_tensor_parallel_size"] = fields.get(
                            "tensor_model_parallel_size", 1)
                    if not fields.get("use_megatron_fsdp"):
                        fields.pop("use_megatron_fsdp", None)
                    rows.append(row(release, tag, parsed, fields, name, f))
        return rows, "scripts/performance/configs/*/" + (
            "workload_base_configs.py" if style == "v2" else "*_workload_base_configs.py")
    for f in yml:
        model = os.path.basename(f)[: -len("_llm_pretrain.yaml")]
        if model not in MODELS:
            continue
        doc = yaml.safe_load(git(bridge, "show", f"{tag}:{f}"))
        for gpu, by_size in (doc.get("perf_matrix") or {}).items():
            if gpu not in GPUS:
                continue
            for size, block in by_size.items():
                n = int(re.fullmatch(r"num_gpus_(\d+)", size).group(1))
                common = block.get("common") or {}
                for prec, own in block.items():
                    if prec not in PRECISIONS:
                        continue
                    merged = {**common, **(own or {})}
                    fields = {k: merged[k] for k in YAML_FIELDS if k in merged}
                    r = {"release": release, "tag": tag, "task": "pretrain",
                         "model": MODELS[model], "gpu": gpu.upper(),
                         "precision": PRECISIONS[prec], "variant": "",
                         "config": f"perf_matrix.{gpu}.{size}.{prec}", "num_gpus": str(n),
                         "source": f"{f}@{tag}"}
                    for key, column in YAML_FIELDS.items():
                        r[column] = cell(column, fields[key]) if key in fields else ""
                    rows.append(r)
    return rows, "scripts/performance/configs/*/*_llm_pretrain.yaml (perf_matrix)"


# NeMo-Framework-Launcher's fine-tuning examples: file name -> zoo model (peft=llama/sft's
# model_train_name is llama2) and the overrides read from each script.
LAUNCHER_MODELS = {"7b": "llama2-7b", "13b": "llama2-13b", "70b": "llama2-70b"}
LAUNCHER_FIELDS = {
    "peft.model.tensor_model_parallel_size": "tp",
    "peft.model.pipeline_model_parallel_size": "pp",
    "peft.model.virtual_pipeline_model_parallel_size": "vp",
    "peft.model.context_parallel_size": "cp",
    "peft.model.micro_batch_size": "mbs",
    "peft.model.global_batch_size": "gbs",
}


def read_launcher(launcher, release, tag):
    """The fine-tuning examples of NeMo-Framework-Launcher `tag` (examples/peft/llama/h100)."""
    rows = []
    folder = "examples/peft/llama/h100"
    files = [f for f in git(launcher, "ls-tree", "--name-only", f"{tag}:{folder}").split()
             if f.endswith(".sh")]
    for name in sorted(files):
        m = re.fullmatch(r"(\d+b)_\d+node(_lora)?\.sh", name)
        if not m or m.group(1) not in LAUNCHER_MODELS:
            continue
        text = git(launcher, "show", f"{tag}:{folder}/{name}")
        args = dict(re.findall(r"^\s*\+{0,2}([\w.]+)=(\S+?)\s*\\?$", text, re.M))
        if args.get("peft") != "llama/sft":
            continue
        lora = args.get("peft.model.peft.peft_scheme") == "lora"
        if lora != bool(m.group(2)):
            raise SystemExit(f"{name}: peft_scheme does not match the file name")
        fp8 = args.get("peft.model.fp8", "false").lower() == "true"
        r = {"release": release, "tag": tag, "task": "lora" if lora else "sft",
             "model": LAUNCHER_MODELS[m.group(1)], "gpu": "H100",
             # conf/peft/llama/sft.yaml: fp8_hybrid with an amax history, delayed scaling
             "precision": "fp8_ds" if fp8 else "bf16", "variant": "", "config": name[:-3],
             "num_gpus": str(int(args["peft.trainer.devices"]) *
                             int(args["peft.trainer.num_nodes"])),
             "source": f"{folder}/{name}@{tag}"}
        for key, column in LAUNCHER_FIELDS.items():
            r[column] = args.get(key, "")
        if r["pp"] and not r["vp"]:
            r["vp"] = "1"  # no virtual pipeline: sft.yaml's virtual_pipeline_model_parallel_size null
        for column in COLUMNS:
            r.setdefault(column, "")
        rows.append(r)
    return rows, folder + "/*.sh"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bridge", required=True, help="Megatron-Bridge git directory")
    ap.add_argument("--launcher", required=True, help="NeMo-Framework-Launcher git directory")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--releases", default=os.path.join(here, "releases.json"))
    ap.add_argument("--out", default=os.path.join(here, "recipe-layouts.csv"))
    args = ap.parse_args()
    releases = json.load(open(args.releases))["releases"]
    rows, read = [], []
    for rel in releases:
        finetune = rel.get("finetune_stack", "")
        if finetune.startswith("NeMo-Framework-Launcher "):
            tag = finetune.split()[1]
            got, what = read_launcher(args.launcher, rel["name"], tag)
            commit = git(args.launcher, "rev-list", "-n", "1", tag).strip()
            read.append(f"# {rel['name']} (fine-tuning): NeMo-Framework-Launcher {tag} "
                        f"({commit[:12]}), {what}: {len(got)} recipes")
            rows.extend(got)
        if not rel.get("stack", "").startswith("Megatron-Bridge"):
            continue
        tag = rel["recipes"].split()[0]
        got, what = read_tag(args.bridge, rel["name"], tag)
        commit = git(args.bridge, "rev-list", "-n", "1", tag).strip()
        read.append(f"# {rel['name']}: Megatron-Bridge {tag} ({commit[:12]}), {what}: "
                    f"{len(got)} recipes")
        rows.extend(got)
    rows.sort(key=lambda r: (r["release"], r["model"], r["task"], r["gpu"], r["precision"],
                             r["variant"], r["config"]))
    buf = io.StringIO()
    buf.write("# Performance-recipe layouts per NeMo release (generated by\n"
              "# calibration/extract_recipe_layouts.py from the tags below; do not edit by hand).\n"
              "# Empty cell: the recipe does not state it (the library recipe or the command line\n"
              "# decides). vp 1: no virtual pipeline. Models: " +
              ", ".join(sorted(set(MODELS.values()) | set(LAUNCHER_MODELS.values()))) + ".\n")
    for line in read:
        buf.write(line + "\n")
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(r)
    with open(args.out, "w") as f:
        f.write(buf.getvalue())
    print(f"{args.out}: {len(rows)} recipes from {len(read)} releases")


if __name__ == "__main__":
    main()
