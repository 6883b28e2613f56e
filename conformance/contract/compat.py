"""Breaking changes between two versions of a published JSON Schema.

A change is *breaking* when a document that was valid under the old schema may be
rejected by the new one, or when a field a consumer of the old schema reads is gone:

- a property removed;
- a field newly required (a new required field, or an optional one made required);
- an enum narrowed (values removed), or values newly restricted where any was allowed;
- a type narrowed (a type removed from a ``type`` list or an ``anyOf``/``oneOf``, or changed);
- a ``const`` changed (or added);
- ``additionalProperties`` newly false where extra keys were allowed.

Optional additions, widened enums and widened types are not breaking. Bounds
(``minimum``, ``maxLength``, ``pattern``, ...) and ``patternProperties`` are not
compared. The walk follows local ``$ref`` (``#/$defs/...``), ``anyOf``/``oneOf``
(and ``allOf``, merged), ``items``, ``prefixItems`` and ``additionalProperties``.

Paths are written in document terms: ``$`` is the document, ``.name`` a property,
``[*]`` any array item, ``[0]`` a tuple position and ``.*`` any value of a map
(``additionalProperties``). Example: ``$.systems.*.metrics.*.value``.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ANY = "any"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


def breaking_changes(old_schema: dict, new_schema: dict) -> list[str]:
    """Every breaking change from ``old_schema`` to ``new_schema``, as ``"<path>: <what>"``.

    Both are JSON Schema documents (dicts, as loaded from JSON). The list is empty when
    the new schema accepts every document the old one did and keeps every property.
    Pure: neither argument is modified.

    Raises ValueError for a ``$ref`` that is not local (``#/...``) or does not resolve.
    """
    walker = _Walker(old_schema, new_schema)
    return _unique(walker.compare(old_schema, new_schema, "$"))


def _unique(items: list[str]) -> list[str]:
    seen: set[str] = set()
    return [x for x in items if not (x in seen or seen.add(x))]


def _prop_path(path: str, name: str) -> str:
    return f"{path}.{name}" if _IDENT.match(name) else f"{path}[{json.dumps(name)}]"


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


class _Walker:
    def __init__(self, old_root: dict, new_root: dict) -> None:
        self.roots = (old_root, new_root)
        self.stack: set[tuple[str, str]] = set()  # ($ref of old, $ref of new) pairs being compared: cycle guard

    # -- resolution ---------------------------------------------------------------------------

    @staticmethod
    def _deref(root: dict, node: Any, seen: tuple[str, ...] = ()) -> tuple[Any, tuple[str, ...]]:
        """Follow ``$ref`` chains; return the merged node and the refs followed."""
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#"):
                raise ValueError(f"only local $ref is supported, got {ref!r}")
            if ref in seen:
                raise ValueError(f"$ref cycle without content at {ref!r}")
            target: Any = root
            for part in ref[1:].split("/")[1:] if ref != "#" else []:
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(target, dict) or part not in target:
                    raise ValueError(f"$ref {ref!r} does not resolve")
                target = target[part]
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            node = {**target, **siblings} if isinstance(target, dict) else target
            seen = (*seen, ref)
        return node, seen

    def _branches(self, root: dict, node: Any, refs: tuple[str, ...] = ()) -> list[tuple[str, dict, tuple[str, ...]]]:
        """The alternatives a schema node allows: ``(type, schema, refs)`` with no anyOf/oneOf/$ref left.

        ``type`` is a JSON type name, or ``"any"`` when the branch does not constrain it,
        or ``"never"`` for the ``false`` schema.
        """
        if node is True or node is None:
            node = {}
        if node is False:
            return [("never", {}, refs)]
        node, refs = self._deref(root, node, refs)
        if node is True:
            node = {}
        if node is False:
            return [("never", {}, refs)]
        if not isinstance(node, dict):
            raise ValueError(f"not a schema: {node!r}")
        if "allOf" in node:
            merged = {k: v for k, v in node.items() if k != "allOf"}
            for part in node["allOf"]:
                part, _ = self._deref(root, part)
                merged = _merge(merged, part)
            return self._branches(root, merged, refs)
        for key in ("anyOf", "oneOf"):
            if key in node:
                rest = {k: v for k, v in node.items() if k not in (key, "discriminator")}
                out = []
                for alt in node[key]:
                    alt, alt_refs = self._deref(root, alt, refs)
                    out.extend(self._branches(root, _merge(rest, alt) if isinstance(alt, dict) else alt, alt_refs))
                return out
        types = node.get("type")
        if types is None and ("const" in node or "enum" in node):
            values = [node["const"]] if "const" in node else node["enum"]
            types = sorted({_json_type(v) for v in values})  # a bare enum allows just its values' types
        if types is None:
            return [(_ANY, node, refs)]
        if isinstance(types, str):
            return [(types, node, refs)]
        return [(t, _restrict(node, t), refs) for t in types]

    # -- comparison ---------------------------------------------------------------------------

    def compare(self, old: Any, new: Any, path: str) -> list[str]:
        old_root, new_root = self.roots
        old_branches = self._branches(old_root, old)
        new_branches = self._branches(new_root, new)
        if any(t == _ANY and not _constrains(b) for t, b, _ in new_branches):
            return []  # the new schema accepts anything here
        out: list[str] = []
        for old_type, old_branch, old_refs in old_branches:
            if old_type == "never":
                continue
            candidates = [(b, r) for t, b, r in new_branches
                          if t == old_type or t == _ANY or (old_type == "integer" and t == "number")]
            if not candidates:
                out.append(f"{path}: type narrowed: {_describe(old_branches)} -> {_describe(new_branches)} "
                           f"({old_type} no longer allowed)")
                continue
            # An alternative of a union is tried first against the one of the same definition name,
            # then against the others; the closest match counts.
            label = _label(old_branch, old_refs)
            same = [(b, r) for b, r in candidates if label is not None and _label(b, r) == label]
            best: list[str] | None = None
            for new_branch, new_refs in same + [c for c in candidates if c not in same]:
                found = self._compare_branch(old_branch, old_refs, new_branch, new_refs, path)
                if best is None or len(found) < len(best):
                    best = found
                if not best:
                    break
            alternatives = sum(t == old_type for t, _, _ in old_branches)
            if best and not same and alternatives > 1:
                out.append(f"{path}: type narrowed: alternative {label or old_type} no longer accepted "
                           f"(the nearest alternative differs: {best[0]})")
            else:
                out.extend(best or [])
        return out

    def _compare_branch(self, old: dict, old_refs: tuple[str, ...], new: dict, new_refs: tuple[str, ...],
                        path: str) -> list[str]:
        key = ("|".join(old_refs), "|".join(new_refs))
        if (old_refs or new_refs) and key in self.stack:
            return []  # already comparing these two definitions further up: a recursive schema
        self.stack.add(key)
        try:
            return self._compare_keywords(old, new, path)
        finally:
            self.stack.discard(key)

    def _compare_keywords(self, old: dict, new: dict, path: str) -> list[str]:
        out: list[str] = []
        out.extend(_values(old, new, path))

        # objects
        old_props, new_props = old.get("properties", {}), new.get("properties", {})
        for name, old_sub in old_props.items():
            sub_path = _prop_path(path, name)
            if name not in new_props:
                out.append(f"{sub_path}: property removed")
                continue
            out.extend(self.compare(old_sub, new_props[name], sub_path))
        old_required, new_required = set(old.get("required", [])), set(new.get("required", []))
        for name in sorted(new_required - old_required):
            was = "optional" if name in old_props else "new"
            out.append(f"{_prop_path(path, name)}: field newly required (was {was})")
        old_extra, new_extra = old.get("additionalProperties", True), new.get("additionalProperties", True)
        if new_extra is False and old_extra is not False:
            out.append(f"{path}: additionalProperties newly false (extra keys were allowed)")
        elif new_extra is not False and old_extra is not False:
            out.extend(self.compare(old_extra, new_extra, f"{path}.*"))

        # arrays
        old_prefix, new_prefix = old.get("prefixItems", []), new.get("prefixItems", [])
        for i, old_item in enumerate(old_prefix):
            if i < len(new_prefix):
                out.extend(self.compare(old_item, new_prefix[i], f"{path}[{i}]"))
            else:
                out.extend(self.compare(old_item, new.get("items", True), f"{path}[{i}]"))
        if "items" in old or "items" in new:
            out.extend(self.compare(old.get("items", True), new.get("items", True), f"{path}[*]"))
        return out


def _label(branch: dict, refs: tuple[str, ...]) -> str | None:
    """The definition name (last ``$ref`` followed) or title of a branch, to pair union alternatives."""
    if refs:
        return refs[-1].rsplit("/", 1)[-1]
    title = branch.get("title")
    return title if isinstance(title, str) else None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _restrict(node: dict, json_type: str) -> dict:
    """One type of a multi-type node, its ``enum`` cut to the values of that type."""
    out = {**node, "type": json_type}
    if "enum" in node:
        fits = {json_type} | ({"integer"} if json_type == "number" else set())
        out["enum"] = [v for v in node["enum"] if _json_type(v) in fits]
    return out


def _merge(base: dict, extra: dict) -> dict:
    """``allOf`` and sibling keywords, merged: properties and required united, other keys from ``extra`` win."""
    merged = {**base, **extra}
    if "properties" in base or "properties" in extra:
        merged["properties"] = {**base.get("properties", {}), **extra.get("properties", {})}
    if "required" in base or "required" in extra:
        merged["required"] = sorted(set(base.get("required", [])) | set(extra.get("required", [])))
    return merged


_ANNOTATIONS = {"title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly",
                "discriminator", "$schema", "$id", "$defs", "definitions"}


def _constrains(branch: dict) -> bool:
    return any(not (k in _ANNOTATIONS or k.startswith("x-")) for k in branch)


def _allowed(node: dict) -> tuple[str, set[str]] | None:
    """("const"|"enum", canonical values) a node restricts to, or None for unrestricted."""
    if "const" in node:
        return "const", {_canon(node["const"])}
    if "enum" in node:
        return "enum", {_canon(v) for v in node["enum"]}
    return None


def _values(old: dict, new: dict, path: str) -> list[str]:
    old_allowed, new_allowed = _allowed(old), _allowed(new)
    if new_allowed is None:
        return []
    new_kind, new_values = new_allowed
    if old_allowed is None:
        shown = ", ".join(sorted(new_values))
        return [f"{path}: {new_kind} added: values restricted to {shown} (any was allowed)"]
    old_kind, old_values = old_allowed
    removed = old_values - new_values
    if not removed:
        return []
    if old_kind == "const" and new_kind == "const":
        return [f"{path}: const changed from {next(iter(old_values))} to {next(iter(new_values))}"]
    return [f"{path}: enum narrowed: removed {', '.join(sorted(removed))}"]


def _describe(branches: list[tuple[str, dict, tuple[str, ...]]]) -> str:
    return "|".join(dict.fromkeys(t for t, _, _ in branches))
