"""Every plan file (scenarios/plans/*.json, notebooks/data/*plan*.json) validates against
scenarios/schema/plan.schema.json, the schema lists the keys the plan loader accepts
(sim/scenario/plan_loader.cpp, plan_keys()), and it rejects a few plans the loader rejects."""
import copy
import json
import pathlib
import re
import sys

import jsonschema

root = pathlib.Path(sys.argv[1])
schema_dir = root / "scenarios/schema"
plan_schema = json.loads((schema_dir / "plan.schema.json").read_text())
scenario_schema = json.loads((schema_dir / "scenario.schema.json").read_text())
bad = 0
try:
    jsonschema.Draft202012Validator.check_schema(plan_schema)
except jsonschema.SchemaError as e:
    print(f"plan.schema.json is not a valid Draft 2020-12 schema: {e.message}")
    sys.exit(1)
try:  # jsonschema >= 4.18
    from referencing import Registry, Resource
    registry = Registry().with_resources(
        [(s["$id"], Resource.from_contents(s)) for s in (plan_schema, scenario_schema)])
    validator = jsonschema.Draft202012Validator(plan_schema, registry=registry)
except ImportError:  # Debian 12's jsonschema 4.10
    resolver = jsonschema.RefResolver.from_schema(
        plan_schema, store={s["$id"]: s for s in (plan_schema, scenario_schema)})
    validator = jsonschema.Draft202012Validator(plan_schema, resolver=resolver)

files = sorted((root / "scenarios/plans").glob("*.json"))
files += sorted((root / "notebooks/data").glob("*plan*.json"))
for f in files:
    for e in validator.iter_errors(json.loads(f.read_text())):
        print(f"{f}: /{'/'.join(map(str, e.path))}: {e.message}")
        bad += 1

# Keys: the loader's tables against the schema's properties.
src = (root / "sim/scenario/plan_loader.cpp").read_text()
def table(name):
    m = re.search(r"const std::vector<std::string> " + name + r" = \{([^}]*)\};", src)
    if not m:
        return None
    return set(re.findall(r'"([^"]+)"', m.group(1)))
props = plan_schema["properties"]
price = plan_schema["$defs"]["price"]
pairs = {
    "kPlanKeys": props,
    "kPlanBatchKeys": props["batch"]["properties"],
    "kCandidateKeys": props["candidates"]["items"]["properties"],
    "kPriceKeys": price["properties"],
    "kPlanRunKeys": props["run"]["properties"],
}
for name, schema_props in pairs.items():
    keys = table(name)
    if keys is None:
        print(f"{name}: not found in sim/scenario/plan_loader.cpp")
        bad += 1
    elif keys != set(schema_props):
        print(f"{name}: loader {sorted(keys)} != schema {sorted(schema_props)}")
        bad += 1
# /prices/* must be the price definition for any key (additionalProperties), as in the loader.
if props["prices"].get("additionalProperties") != {"$ref": "#/$defs/price"}:
    print("/prices: additionalProperties is not {\"$ref\": \"#/$defs/price\"}")
    bad += 1
# Strict objects: the loader refuses unknown keys at every level of its own tables.
for where, obj in (("/", plan_schema), ("/batch", props["batch"]),
                   ("/candidates/*", props["candidates"]["items"]), ("/prices/*", price),
                   ("/run", props["run"])):
    if obj.get("additionalProperties") is not False:
        print(f"{where}: additionalProperties is not false")
        bad += 1

# Plans the loader rejects must be rejected by the schema too.
example = root / "scenarios/plans/llama3.1-405b-15t.json"
base = json.loads(example.read_text())
def mutated(change):
    p = copy.deepcopy(base)
    change(p)
    return p
def drop_limits(p):
    p.pop("deadline_days", None)
    p.pop("budget_usd", None)
def negative_price(p):
    next(iter(p["prices"].values()))["usd_per_instance_hour"] = -1
negatives = {
    "no deadline_days and no budget_usd": mutated(drop_limits),
    "negative usd_per_instance_hour": mutated(negative_price),
    "unknown top-level key": mutated(lambda p: p.update(deadline=150)),
    "max_segment_days 183": mutated(lambda p: p.update(max_segment_days=183)),
    "unknown run key (duration: the planner sets it)": mutated(
        lambda p: p["run"].update(duration="30d")),
    "unknown parallelism key": mutated(lambda p: p["parallelism"][0].update(tpp=2)),
    "empty price table": mutated(lambda p: p.update(prices={})),
    "confidence 0.9999": mutated(lambda p: p.update(confidence=0.9999)),
}
for what, plan in negatives.items():
    if validator.is_valid(plan):
        print(f"negative case accepted by the schema: {what}")
        bad += 1
# ... and the example with either limit alone is accepted.
for keep in ("deadline_days", "budget_usd"):
    p = mutated(drop_limits)
    p[keep] = 150 if keep == "deadline_days" else 1e8
    for e in validator.iter_errors(p):
        print(f"example with only {keep}: /{'/'.join(map(str, e.path))}: {e.message}")
        bad += 1

print(f"{len(files)} plan files, {len(pairs)} key tables, {len(negatives)} negative cases, "
      f"{bad} problems")
sys.exit(1 if bad or not files else 0)
