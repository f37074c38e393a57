#!/usr/bin/python3
"""Writes docs/scenario-reference.md from scenarios/schema.json: every key of a scenario file
with its type, unit, default and description, in the schema's order.

    /usr/bin/python3 scripts/schema_doc.py            # rewrite docs/scenario-reference.md
    /usr/bin/python3 scripts/schema_doc.py --check    # exit 1 if the file is out of date

The tests run --check: a key added to the schema without regenerating the reference fails.
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "scenarios" / "schema.json"
OUT = ROOT / "docs" / "scenario-reference.md"

HEADER = """# Scenario file reference

Generated from [`scenarios/schema.json`](../scenarios/schema.json) by `scripts/schema_doc.py`;
do not edit by hand. `clustersim schema` prints the same schema. Quantities take a number in SI
units (seconds, bytes, bytes/s, FLOP/s, 1/s, USD) or a string with a unit (see the types at the
end). Keys are dotted paths, as `--set` and Python's `Scenario.set` take them; `[]` is a list
item. How the keys combine, with examples: [scenarios.md](scenarios.md).

| key | type | default | description |
|---|---|---|---|
"""


def type_of(node, defs):
    if "$ref" in node:
        name = node["$ref"].split("/")[-1]
        return f"[{name}](#{name.replace('_', '-')})"
    if "oneOf" in node or "anyOf" in node:
        return " or ".join(type_of(alt, defs) for alt in node.get("oneOf", node.get("anyOf")))
    t = node.get("type")
    if "enum" in node:
        return " | ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    if isinstance(t, list):
        return " or ".join(t)
    if t == "array" and "items" in node:
        return f"list of {type_of(node['items'], defs)}"
    return t or "any"


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def walk(node, path, defs, rows):
    for key, child in node.get("properties", {}).items():
        p = f"{path}.{key}" if path else key
        default = f"`{json.dumps(child['default'])}`" if "default" in child else ""
        rows.append(f"| `{p}` | {cell(type_of(child, defs))} | {cell(default)} | {cell(child.get('description', ''))} |")
        walk(child, p, defs, rows)
        # A key whose type is a definition with keys of its own (workload.model): its keys too.
        if "$ref" in child:
            walk(defs.get(child["$ref"].split("/")[-1], {}), p, defs, rows)
        for alt in child.get("oneOf", []) + child.get("anyOf", []):
            walk(alt, p, defs, rows)
        if child.get("type") == "array" and isinstance(child.get("items"), dict):
            walk(child["items"], p + "[]", defs, rows)


def render():
    schema = json.loads(SCHEMA.read_text())
    defs = schema.get("definitions", {})
    rows = []
    walk(schema, "", defs, rows)
    out = [HEADER + "\n".join(rows), "", "## Types", ""]
    for name, d in defs.items():
        out.append(f"### {name}")
        out.append("")
        out.append(cell(d.get("description", "")))
        if "examples" in d:
            out.append("")
            out.append("Examples: " + ", ".join(f"`{json.dumps(e)}`" for e in d["examples"]))
        out.append("")
    return "\n".join(out)


def main():
    text = render()
    if "--check" in sys.argv:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is out of date: run /usr/bin/python3 scripts/schema_doc.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
