"""Every sweep file in scenarios/sweeps/ validates against scenarios/schema/sweep.schema.json, and
the schema lists the keys the sweep loader accepts (sim/scenario/sweep_loader.cpp, sweep_keys())."""
import json
import pathlib
import re
import sys

import jsonschema

root = pathlib.Path(sys.argv[1])
schema_dir = root / "scenarios/schema"
sweep_schema = json.loads((schema_dir / "sweep.schema.json").read_text())
scenario_schema = json.loads((schema_dir / "scenario.schema.json").read_text())
jsonschema.Draft202012Validator.check_schema(sweep_schema)
try:  # jsonschema >= 4.18
    from referencing import Registry, Resource
    registry = Registry().with_resources(
        [(s["$id"], Resource.from_contents(s)) for s in (sweep_schema, scenario_schema)])
    validator = jsonschema.Draft202012Validator(sweep_schema, registry=registry)
except ImportError:  # Debian 12's jsonschema 4.10
    resolver = jsonschema.RefResolver.from_schema(
        sweep_schema, store={s["$id"]: s for s in (sweep_schema, scenario_schema)})
    validator = jsonschema.Draft202012Validator(sweep_schema, resolver=resolver)
bad = 0
files = sorted((root / "scenarios/sweeps").glob("*.json"))
for f in files:
    for e in validator.iter_errors(json.loads(f.read_text())):
        print(f"{f}: /{'/'.join(map(str, e.path))}: {e.message}")
        bad += 1

# Keys: the loader's tables against the schema's properties.
src = (root / "sim/scenario/sweep_loader.cpp").read_text()
def table(name):
    m = re.search(r"const std::vector<std::string> " + name + r" = \{([^}]*)\};", src)
    return set(re.findall(r'"([^"]+)"', m.group(1)))
defs = sweep_schema["$defs"]
pairs = {
    "kSweepKeys": sweep_schema["properties"],
    "kGridKeys": defs["grid"]["properties"],
    "kZipKeys": defs["zip"]["properties"],
    "kZipParamKeys": defs["zip"]["properties"]["parameters"]["items"]["properties"],
    "kRandomKeys": defs["random"]["properties"],
    "kRandomParamKeys": defs["random"]["properties"]["parameters"]["items"]["properties"],
    "kFilterKeys": sweep_schema["properties"]["filters"]["items"]["properties"],
}
for name, props in pairs.items():
    if table(name) != set(props):
        print(f"{name}: loader {sorted(table(name))} != schema {sorted(props)}")
        bad += 1
print(f"{len(files)} sweep files, {bad} problems")
sys.exit(1 if bad or not files else 0)
