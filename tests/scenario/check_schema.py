"""Every scenario in scenarios/ must validate against scenarios/schema/scenario.schema.json."""
import json
import pathlib
import sys

import jsonschema

root = pathlib.Path(sys.argv[1])
schema = json.loads((root / "scenarios/schema/scenario.schema.json").read_text())
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
files = sorted((root / "scenarios").glob("*.json"))
bad = 0
for f in files:
    errors = list(validator.iter_errors(json.loads(f.read_text())))
    for e in errors:
        print(f"{f}: /{'/'.join(map(str, e.path))}: {e.message}")
    bad += len(errors)
print(f"{len(files) - (1 if bad else 0)} passed, {1 if bad else 0} failed")
sys.exit(1 if bad or not files else 0)
