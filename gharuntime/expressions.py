"""A small evaluator for GitHub Actions expressions (`${{ ... }}`): enough for job names,
runs-on labels and matrix values. Contexts it is not given (github.*, secrets.*, ...) raise
UnknownExpression so the caller can leave the text as written; so does anything past its
limits (MAX_EXPRESSION_DEPTH levels of nesting, numbers of MAX_NUMBER_DIGITS digits), checked as
it reads, so no input reaches Python's recursion or digit limits."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from gharuntime.errors import GharuntimeError

__all__ = ["MAX_EXPRESSION_DEPTH", "Partial", "UnknownExpression", "evaluate", "value_text"]


def value_text(value: Any) -> str:
    """How GitHub prints a value inside a name: booleans lower case, objects as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


class UnknownExpression(GharuntimeError):
    """The expression needs a context we do not have (github.*, secrets.*, ...)."""


class Partial(dict[str, Any]):
    """A context known only in part (`github` with its `event_name` alone): a key it does not
    hold is unknown (UnknownExpression), not null as in a context known whole."""


_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>\|\||&&|==|!=|<=|>=|[<>!(),.\[\]])|(?P<id>[A-Za-z_][A-Za-z0-9_-]*))"
)


MAX_EXPRESSION_DEPTH = 50
"""Nesting of parentheses, indexes and calls (GitHub's own parser stops at 50 too)."""
MAX_NUMBER_DIGITS = 100


class _Evaluator:
    def __init__(
        self, text: str, context: Mapping[str, Any], functions: Mapping[str, Any] | None = None
    ) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise UnknownExpression(text)
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0
        self.depth = 0
        self.context = context
        self.functions = {k.lower(): v for k, v in (functions or {}).items()}
        # > 0 while reading an operand whose value cannot change the result (`true || x`,
        # `false && x`): GitHub does not evaluate it, so what it needs may be unknown
        self.lazy = 0

    def _unknown(self, what: str) -> Any:
        if self.lazy:
            return None
        raise UnknownExpression(what)

    def evaluate(self) -> Any:
        value = self._or()
        if self.i != len(self.tokens):
            raise UnknownExpression("trailing tokens")
        return value

    def _peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def _take(self) -> tuple[str, str]:
        if self.i >= len(self.tokens):
            raise UnknownExpression("unexpected end")
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def _or(self) -> Any:
        # every nesting (parentheses, `[...]`, a call's arguments) passes here: one counter
        self.depth += 1
        if self.depth > MAX_EXPRESSION_DEPTH:
            raise UnknownExpression(f"nested deeper than {MAX_EXPRESSION_DEPTH} levels")
        left = self._and()
        while self._peek() == "||":
            self._take()
            self.lazy += bool(left)
            right = self._and()
            self.lazy -= bool(left)
            left = left if left else right
        self.depth -= 1
        return left

    def _and(self) -> Any:
        left = self._cmp()
        while self._peek() == "&&":
            self._take()
            self.lazy += not left
            right = self._cmp()
            self.lazy -= not left
            left = right if left else left
        return left

    def _cmp(self) -> Any:
        left = self._unary()
        while self._peek() in ("==", "!="):
            op = self._take()[1]
            right = self._unary()
            eq = (
                str(left).lower() == str(right).lower()
                if isinstance(left, str) and isinstance(right, str)
                else left == right
            )
            left = eq if op == "==" else not eq
        return left

    def _unary(self) -> Any:
        nots = 0
        while self._peek() == "!":  # a loop: ten thousand `!` are not ten thousand frames
            self._take()
            nots += 1
        value = self._primary()
        return (not value) if nots % 2 else (bool(value) if nots else value)

    def _primary(self) -> Any:
        kind, text = self._take()
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            if len(text) > MAX_NUMBER_DIGITS:
                raise UnknownExpression(f"a number of more than {MAX_NUMBER_DIGITS} digits")
            return float(text) if "." in text else int(text)
        if text == "(":
            inner = self._or()
            self._expect(")")
            return inner
        if kind != "id":
            raise UnknownExpression(text)
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if self._peek() == "(":
            return self._call(text)
        if text not in self.context:
            return self._unknown(text)
        value: Any = self.context[text]
        while self._peek() in (".", "["):
            name: Any
            if self._take()[1] == ".":
                name = self._take()[1]
            else:
                name = self._or()
                self._expect("]")
            if not isinstance(value, dict):
                value = None  # read the rest of the chain: `a.b.c` of a null `a` is null
            elif isinstance(value, Partial) and name not in value:
                value = self._unknown(str(name))
            else:
                value = value.get(name) if isinstance(name, str) else None
        return value

    def _expect(self, op: str) -> None:
        if self._take()[1] != op:
            raise UnknownExpression(f"expected {op}")

    def _call(self, fn: str) -> Any:
        self._expect("(")
        args: list[Any] = []
        while self._peek() != ")":
            args.append(self._or())
            if self._peek() == ",":
                self._take()
        self._expect(")")
        low = fn.lower()
        if low in self.functions and not args:
            return self.functions[low]
        if low == "format" and args:
            return re.sub(
                r"\{(\d+)\}",
                lambda m: (
                    value_text(args[int(m.group(1)) + 1])
                    if int(m.group(1)) + 1 < len(args)
                    else m.group(0)
                ),
                str(args[0]),
            )
        if low == "contains" and len(args) == 2:
            hay, needle = args
            return (
                needle in hay if isinstance(hay, list) else str(needle).lower() in str(hay).lower()
            )
        if low == "startswith" and len(args) == 2:
            return str(args[0]).lower().startswith(str(args[1]).lower())
        if low == "endswith" and len(args) == 2:
            return str(args[0]).lower().endswith(str(args[1]).lower())
        if low == "join" and args:
            sep = str(args[1]) if len(args) > 1 else ","
            return sep.join(map(value_text, args[0])) if isinstance(args[0], list) else str(args[0])
        if low == "tojson" and len(args) == 1:
            return json.dumps(args[0])
        if low == "fromjson" and len(args) == 1:
            try:
                return json.loads(str(args[0]))
            except (ValueError, RecursionError) as exc:
                if self.lazy:
                    return None
                raise UnknownExpression("bad json") from exc
        return self._unknown(fn)


def evaluate(
    text: str, context: Mapping[str, Any], functions: Mapping[str, Any] | None = None
) -> Any:
    """The value of one expression (the text between `${{` and `}}`). `functions`: calls
    without arguments known to have a value (`success()`: True). An operand that cannot change
    the result (`true || x`) is read but not evaluated, as GitHub does."""
    return _Evaluator(text, context, functions).evaluate()
