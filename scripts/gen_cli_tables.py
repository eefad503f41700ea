#!/usr/bin/env python3
"""Renders the JSON field tables of docs/cli.md from the JSON Schemas in docs/schema/.

Each schema docs/schema/NAME.json becomes one markdown table `| field | type | meaning |`
(nested objects and arrays of objects as dotted rows, `norm_nodes[].params[].role`, in the
order the schema lists its properties), written between the marker lines

    <!-- json-schema: NAME -->
    <!-- /json-schema -->

in docs/cli.md. Every schema needs exactly one such block, and every block a schema.

    scripts/gen_cli_tables.py           rewrite docs/cli.md
    scripts/gen_cli_tables.py --check   change nothing; exit 1 with a unified diff when
                                        docs/cli.md is not what it would write

It also holds the schemas to the rules their tables rely on: every property has a description
and a type (or a const), every object with fixed keys has additionalProperties false, and a
property that is not required says when it appears ("with", "when" or "only" in its
description). A schema that breaks one is exit 2. Python 3 standard library only.
"""
import argparse
import difflib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "docs" / "schema"
CLI_MD = ROOT / "docs" / "cli.md"

BLOCK = re.compile(r"(<!-- json-schema: ([A-Za-z0-9_.-]+) -->\n)(.*?)(<!-- /json-schema -->)", re.DOTALL)
CONDITION = re.compile(r"\b(with|when|only)\b", re.IGNORECASE)


class SchemaError(Exception):
    pass


def load_schemas():
    schemas = {}
    for path in sorted(SCHEMA_DIR.glob("*.json")):
        with open(path, encoding="utf-8") as f:
            schemas[path.stem] = json.load(f)
    if not schemas:
        raise SchemaError(f"no schema in {SCHEMA_DIR}")
    return schemas


class Renderer:
    def __init__(self, schemas):
        self.schemas = schemas

    def resolve(self, node, name):
        """Follows local $refs ('#/$defs/x'); returns (node, file) where file is the schema
        name the node belongs to, or None for a reference to another file (left as it is)."""
        seen = 0
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if not ref.startswith("#"):
                return node, None
            target = self.schemas[name]
            for part in ref[2:].split("/"):
                if part not in target:
                    raise SchemaError(f"{name}.json: $ref {ref} names nothing")
                target = target[part]
            # A description beside the $ref wins over the target's.
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            seen += 1
            if seen > 20:
                raise SchemaError(f"{name}.json: $ref loop at {ref}")
        return node, name

    def external_kind(self, ref):
        """'`bnorm.fold/1`' for a reference to fold.json."""
        stem = ref.split("#")[0].rsplit("/", 1)[-1]
        if stem.endswith(".json"):
            stem = stem[: -len(".json")]
        if stem not in self.schemas:
            raise SchemaError(f"$ref {ref}: no schema {stem}.json in {SCHEMA_DIR}")
        const = self.schemas[stem].get("properties", {}).get("schema", {}).get("const")
        return f"`{const}`" if const else f"{stem}.json"

    def branches(self, node):
        """The alternatives of an if/then/else, oneOf or anyOf (the node itself otherwise)."""
        if "then" in node or "else" in node:
            return [b for b in (node.get("then"), node.get("else")) if b is not None]
        for key in ("oneOf", "anyOf"):
            if key in node:
                return node[key]
        return [node]

    def type_text(self, node, name):
        node, file = self.resolve(node, name)
        if file is None:
            return self.external_kind(node["$ref"]) + " object"
        alternatives = self.branches(node)
        if alternatives != [node]:
            return " or ".join(self.type_text(b, name) for b in alternatives)
        if "const" in node:
            return f"string `{node['const']}`" if isinstance(node["const"], str) else f"`{json.dumps(node['const'])}`"
        types = node.get("type")
        types = [types] if isinstance(types, str) else list(types or [])
        words = []
        for t in types:
            if t == "array":
                items = node.get("items", {})
                count = ""
                if node.get("minItems") is not None and node.get("minItems") == node.get("maxItems"):
                    count = f"{node['minItems']} "
                item = self.type_text(items, name)
                words.append(f"array of {count}({item})" if " or " in item else f"array of {count}{item}")
            elif t == "object":
                extra = node.get("additionalProperties")
                if "properties" not in node and isinstance(extra, dict):
                    words.append(f"object (name → {self.type_text(extra, name)})")
                else:
                    words.append(node.get("title", "object"))
            else:
                words.append(t)
        text = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
        if "enum" in node:
            text += ": " + ", ".join(f"`{v}`" if isinstance(v, str) else json.dumps(v) for v in node["enum"])
        return text

    def check_property(self, where, prop, required, file):
        if "description" not in prop:
            raise SchemaError(f"{where}: no description")
        if "type" not in prop and "const" not in prop and file is not None and self.branches(prop) == [prop]:
            raise SchemaError(f"{where}: no type")
        if not required and not CONDITION.search(prop["description"]):
            raise SchemaError(f"{where}: not required, but its description does not say when it appears "
                              "('with', 'when' or 'only')")

    def check_object(self, where, node):
        if "properties" in node and node.get("additionalProperties") is not False:
            raise SchemaError(f"{where}: an object with fixed keys needs \"additionalProperties\": false")
        for key in node.get("required", []):
            if key not in node.get("properties", {}):
                raise SchemaError(f"{where}: required '{key}' is not a property")

    def rows(self, node, name, prefix, where, label=""):
        self.check_object(where, node)
        required = set(node.get("required", []))
        out = []
        for key, raw in node.get("properties", {}).items():
            path = prefix + key
            prop, file = self.resolve(raw, name)
            self.check_property(f"{where}: {path}", prop, key in required, file)
            meaning = prop["description"]
            if label and not meaning[:2].isupper():
                meaning = meaning[0].lower() + meaning[1:]
            out.append((path, self.type_text(raw, name), label + meaning))
            out.extend(self.children(prop, file, path, f"{where}: {path}"))
        return out

    def children(self, prop, file, path, where):
        if file is None:
            return []
        out = []
        kinds = prop.get("type")
        kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
        if "object" in kinds and "properties" in prop:
            out.extend(self.rows(prop, file, path + ".", where))
        if "array" in kinds and "items" in prop:
            for branch in self.branches(prop["items"]):
                item, item_file = self.resolve(branch, file)
                if item_file is None or "properties" not in item:
                    continue
                label = f"{item['title'][0].upper()}{item['title'][1:]}: " if "title" in item else ""
                out.extend(self.rows(item, item_file, path + "[].", where, label))
        return out

    def table(self, name):
        schema = self.schemas[name]
        lines = ["| field | type | meaning |", "|---|---|---|"]
        for path, kind, meaning in self.rows(schema, name, "", f"{name}.json"):
            cells = [f"`{path}`", kind, meaning]
            lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
        return "\n".join(lines) + "\n"


def render(text, schemas):
    renderer = Renderer(schemas)
    tables = {name: renderer.table(name) for name in schemas}
    found = []

    def replace(m):
        name = m.group(2)
        if name not in tables:
            raise SchemaError(f"docs/cli.md: block '{name}' has no schema docs/schema/{name}.json")
        found.append(name)
        # Blank lines around the table: a line right after a table would be read as one more row.
        return m.group(1) + "\n" + tables[name] + "\n" + m.group(4)

    out = BLOCK.sub(replace, text)
    missing = sorted(set(schemas) - set(found))
    twice = sorted({n for n in found if found.count(n) > 1})
    if missing:
        raise SchemaError("docs/cli.md has no block for " + ", ".join(missing) +
                          " (add the lines '<!-- json-schema: NAME -->' and '<!-- /json-schema -->')")
    if twice:
        raise SchemaError("docs/cli.md has more than one block for " + ", ".join(twice))
    return out


def main():
    parser = argparse.ArgumentParser(description="Render docs/cli.md's JSON field tables from docs/schema/*.json.")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 with a diff when docs/cli.md is not what would be written")
    args = parser.parse_args()
    try:
        schemas = load_schemas()
        old = CLI_MD.read_text(encoding="utf-8")
        new = render(old, schemas)
    except (SchemaError, OSError, json.JSONDecodeError) as e:
        print(f"gen_cli_tables: error: {e}", file=sys.stderr)
        return 2
    if args.check:
        if old == new:
            print(f"docs/cli.md: the {len(schemas)} JSON tables are what docs/schema/ gives")
            return 0
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                                   "docs/cli.md", "docs/cli.md (from docs/schema/)"))
        print("docs/cli.md: the JSON tables differ from docs/schema/; run scripts/gen_cli_tables.py", file=sys.stderr)
        return 1
    if old != new:
        CLI_MD.write_text(new, encoding="utf-8")
        print("docs/cli.md: rewrote the JSON tables from docs/schema/")
    else:
        print("docs/cli.md: already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
