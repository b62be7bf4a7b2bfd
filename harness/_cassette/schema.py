"""A fast pre-check of cassette lines, compiled from `cassette.schema.json` itself.

The `jsonschema` validator costs about half a millisecond a line, far more than
building the SDK's event object. `compile_check` turns the same schema into plain
Python predicates with three answers: `True` (the line certainly matches), `False`
(it certainly does not) and `None` (cannot tell). The codec skips the full validator
only on `True`; on anything else the validator decides and words the error, so
behaviour and messages stay the validator's, and the schema file stays the only
source of truth. Keywords are evaluated exactly as JSON Schema 2020-12 defines them on
the values a JSON parser returns; a keyword this module does not know makes its
subschema `None` (inconclusive), never `True`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

__all__ = ["Check", "Verdict", "compile_check"]

Verdict = bool | None
Check = Callable[[Any], Verdict]

#: keywords that never change a verdict
ANNOTATIONS: Final = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples"}
)


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


JSON_TYPES: Final[dict[str, Callable[[Any], bool]]] = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
}


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float)


def _json_equal(value: Any, expected: Any) -> Verdict:
    """JSON equality against a scalar (`true` is not `1`, `1` is `1.0`); `None` for containers."""
    if isinstance(value, dict | list):
        return False
    if isinstance(value, bool) or isinstance(expected, bool):
        return type(value) is type(expected) and value == expected
    if isinstance(value, str) or isinstance(expected, str):
        return type(value) is type(expected) and value == expected
    return bool(value == expected)


def _equal_to(expected: Any) -> Check:
    return lambda instance: _json_equal(instance, expected)


def _all(checks: Sequence[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]

    def check(value: Any) -> Verdict:
        verdict: Verdict = True
        for part in checks:
            result = part(value)
            if result is False:
                return False
            if result is None:
                verdict = None
        return verdict

    return check


def _any(checks: Sequence[Check]) -> Check:
    def check(value: Any) -> Verdict:
        verdict: Verdict = False
        for part in checks:
            result = part(value)
            if result is True:
                return True
            if result is None:
                verdict = None
        return verdict

    return check


def _one(checks: Sequence[Check]) -> Check:
    def check(value: Any) -> Verdict:
        results = [part(value) for part in checks]
        if None in results:
            return None
        return results.count(True) == 1

    return check


def _not(inner: Check) -> Check:
    def check(value: Any) -> Verdict:
        result = inner(value)
        return None if result is None else not result

    return check


def _if(condition: Check, then: Check, otherwise: Check) -> Check:
    def check(value: Any) -> Verdict:
        result = condition(value)
        if result is None:
            return None
        return then(value) if result else otherwise(value)

    return check


def _const_dispatch(branches: Any) -> tuple[str, dict[str, Any]] | None:
    """For `allOf: [{if: {properties: {P: {const: "a"}}}, then: ...}, ...]` (one P,
    distinct string constants): `(P, {"a": then, ...})`, so that one lookup finds the
    only `then` that can apply. Any other `allOf` gives `None`."""
    name: str | None = None
    table: dict[str, Any] = {}
    for branch in branches:
        if not isinstance(branch, dict) or set(branch) != {"if", "then"}:
            return None
        condition = branch["if"]
        if not isinstance(condition, dict) or set(condition) != {"properties"}:
            return None
        members = condition["properties"]
        if not isinstance(members, dict) or len(members) != 1:
            return None
        ((member, test),) = members.items()
        if not isinstance(test, dict) or set(test) != {"const"}:
            return None
        const = test["const"]
        if name not in (None, member) or not isinstance(const, str) or const in table:
            return None
        name = member
        table[const] = branch["then"]
    return None if name is None else (name, table)


def _accept(value: Any) -> Verdict:
    return True


def _reject(value: Any) -> Verdict:
    return False


def _unknown(value: Any) -> Verdict:
    return None


class _Compiler:
    """Compiles one schema document; `$ref`s point into its `$defs`."""

    def __init__(self, definitions: Mapping[str, Any]) -> None:
        self.definitions = definitions
        self.compiled: dict[str, Check] = {}

    def ref(self, target: str) -> Check:
        name = target.removeprefix("#/$defs/")
        if name == target or name not in self.definitions:
            return _unknown
        if name not in self.compiled:
            self.compiled[name] = _unknown  # a recursive reference stays inconclusive
            self.compiled[name] = self.schema(self.definitions[name])
        return self.compiled[name]

    def schema(self, node: Any) -> Check:
        if node is True:
            return _accept
        if node is False:
            return _reject
        if not isinstance(node, dict):
            return _unknown
        checks = [self.keyword(key, value, node) for key, value in node.items()]
        checks = [check for check in checks if check is not _accept]
        return _all(checks) if checks else _accept

    def keyword(self, key: str, value: Any, node: dict[str, Any]) -> Check:
        if key in ANNOTATIONS or key in ("then", "else", "$defs"):
            return _accept
        method = KEYWORDS.get(key)
        return _unknown if method is None else method(self, value, node)

    def kw_type(self, value: Any, node: dict[str, Any]) -> Check:
        names = [value] if isinstance(value, str) else list(value)
        if not all(name in JSON_TYPES for name in names):
            return _unknown
        tests = [JSON_TYPES[name] for name in names]
        if len(tests) == 1:
            return tests[0]
        return lambda instance: any(test(instance) for test in tests)

    def kw_required(self, value: Any, node: dict[str, Any]) -> Check:
        keys = tuple(value)
        if len(keys) == 1:
            (key,) = keys
            return lambda instance: not isinstance(instance, dict) or key in instance
        if len(keys) == 2:
            first, second = keys
            return lambda instance: (
                not isinstance(instance, dict) or (first in instance and second in instance)
            )
        return lambda instance: not isinstance(instance, dict) or all(k in instance for k in keys)

    def kw_properties(self, value: Any, node: dict[str, Any]) -> Check:
        members = [(name, self.schema(sub)) for name, sub in value.items()]
        if len(members) == 1:
            ((only, member),) = members
            return lambda instance: (
                not isinstance(instance, dict) or only not in instance or member(instance[only])
            )

        def check(instance: Any) -> Verdict:
            if not isinstance(instance, dict):
                return True
            verdict: Verdict = True
            for name, member in members:
                if name in instance:
                    result = member(instance[name])
                    if result is False:
                        return False
                    if result is None:
                        verdict = None
            return verdict

        return check

    def kw_const(self, value: Any, node: dict[str, Any]) -> Check:
        return self.kw_enum([value], node)

    def kw_enum(self, value: Any, node: dict[str, Any]) -> Check:
        options = list(value)
        if not all(_scalar(option) for option in options):
            return _unknown
        if all(isinstance(option, str) for option in options):
            strings = frozenset(options)
            return lambda instance: isinstance(instance, str) and instance in strings
        return _any([_equal_to(option) for option in options])

    def kw_minimum(self, value: Any, node: dict[str, Any]) -> Check:
        return lambda instance: not _is_number(instance) or instance >= value

    def kw_minLength(self, value: Any, node: dict[str, Any]) -> Check:
        return lambda instance: not isinstance(instance, str) or len(instance) >= value

    def kw_items(self, value: Any, node: dict[str, Any]) -> Check:
        member = self.schema(value)

        def check(instance: Any) -> Verdict:
            verdict: Verdict = True
            for item in instance if isinstance(instance, list) else ():
                result = member(item)
                if result is False:
                    return False
                if result is None:
                    verdict = None
            return verdict

        return check

    def kw_ref(self, value: Any, node: dict[str, Any]) -> Check:
        return self.ref(value)

    def kw_not(self, value: Any, node: dict[str, Any]) -> Check:
        return _not(self.schema(value))

    def kw_allOf(self, value: Any, node: dict[str, Any]) -> Check:
        dispatch = _const_dispatch(value)
        if dispatch is None:
            return _all([self.schema(sub) for sub in value])
        name, branches = dispatch
        thens = {const: self.schema(then) for const, then in branches.items()}
        every = _all(list(thens.values()))

        def check(instance: Any) -> Verdict:
            if not isinstance(instance, dict) or name not in instance:
                return every(instance)  # every `if` holds vacuously: every `then` applies
            then = thens.get(instance[name]) if isinstance(instance[name], str) else None
            return True if then is None else then(instance)

        return check

    def kw_anyOf(self, value: Any, node: dict[str, Any]) -> Check:
        return _any([self.schema(sub) for sub in value])

    def kw_oneOf(self, value: Any, node: dict[str, Any]) -> Check:
        return _one([self.schema(sub) for sub in value])

    def kw_if(self, value: Any, node: dict[str, Any]) -> Check:
        then = self.schema(node.get("then", True))
        otherwise = self.schema(node.get("else", True))
        return _if(self.schema(value), then, otherwise)


KEYWORDS: Final[dict[str, Callable[[_Compiler, Any, dict[str, Any]], Check]]] = {
    "type": _Compiler.kw_type,
    "required": _Compiler.kw_required,
    "properties": _Compiler.kw_properties,
    "const": _Compiler.kw_const,
    "enum": _Compiler.kw_enum,
    "minimum": _Compiler.kw_minimum,
    "minLength": _Compiler.kw_minLength,
    "items": _Compiler.kw_items,
    "$ref": _Compiler.kw_ref,
    "not": _Compiler.kw_not,
    "allOf": _Compiler.kw_allOf,
    "anyOf": _Compiler.kw_anyOf,
    "oneOf": _Compiler.kw_oneOf,
    "if": _Compiler.kw_if,
}


def compile_check(schema: Any, definitions: Mapping[str, Any] | None = None) -> Check:
    """A three-valued predicate for `schema`, whose `$ref`s resolve in `definitions`."""
    if definitions is None and isinstance(schema, dict):
        definitions = schema.get("$defs", {})
    return _Compiler(definitions or {}).schema(schema)
