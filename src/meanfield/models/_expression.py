"""Formulas of one variable typed by a user (``"exp(2*t)"``), read without evaluating any code.

The text is parsed by :mod:`ast` and rebuilt, node by node, as a :mod:`sympy` expression from an allow-list:
numbers, the variable ``t``, the constants ``pi`` and ``e``, the operators ``+ - * / **`` and the functions
of :data:`FUNCTIONS`. Anything else (names, attributes, subscripts, calls of other functions, keywords,
comparisons, lambdas, strings) is refused with the offending piece named, so no code of the user's is ever
run. The expression's derivative is sympy's, and both are compiled to NumPy functions by
:func:`sympy.lambdify` from the rebuilt tree.

Numbers become floats, except integer exponents |n| ≤ :data:`MAX_INTEGER_EXPONENT` (kept exact so that
``(1 - t)**3`` differentiates to ``-3*(1 - t)**2``): an integer power of an integer never has to be
computed exactly (``9**9**9`` is a float overflow, reported as a kernel that is not finite). Trees deeper than
:data:`MAX_DEPTH`, numbers beyond the doubles and formulas with complex values (``log(-1)``, ``sqrt(-1)*t``)
are refused by name; a formula is expanded as a polynomial only when a bound of its degree read off the tree
is at most :data:`MAX_POLYNOMIAL_DEGREE`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sympy

__all__ = ["FUNCTIONS", "Formula", "parse_formula"]

#: the functions a formula may call, by the names it may use
FUNCTIONS: dict[str, Callable[..., sympy.Expr]] = {
    "exp": sympy.exp, "log": sympy.log, "sqrt": sympy.sqrt, "abs": sympy.Abs,
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan,
    "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh,
    "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan,
    "arcsin": sympy.asin, "arccos": sympy.acos, "arctan": sympy.atan,
}
CONSTANTS = {"pi": sympy.pi, "e": sympy.E}
MAX_LENGTH = 2000
MAX_INTEGER_EXPONENT = 64
MAX_DEPTH = 64
"""Deepest nesting of a formula's syntax tree (a deeper one is refused before sympy sees it)."""
MAX_POLYNOMIAL_DEGREE = 64
"""A formula whose degree bound exceeds this is not expanded as a polynomial (``((1+t)**64)**64`` is kept as
it is: expanding it would take seconds to minutes)."""

_OPERATORS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
              ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b}
_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.Mod: "%",
            ast.FloorDiv: "//", ast.MatMult: "@", ast.BitXor: "^", ast.BitAnd: "&", ast.BitOr: "|",
            ast.LShift: "<<", ast.RShift: ">>"}


@dataclass(frozen=True)
class Formula:
    """A parsed formula f(t): its text, the sympy expression, and NumPy functions of f and f'."""

    text: str
    expression: sympy.Expr
    variable: str

    @property
    def function(self) -> Callable[[np.ndarray], np.ndarray]:
        """t ↦ f(t) on arrays."""
        return _compiled(self.expression, self.variable, self.text)

    @property
    def polynomial_degree(self) -> int | None:
        """The degree of f as a polynomial in the variable, None when it is not one or its degree may exceed
        :data:`MAX_POLYNOMIAL_DEGREE` (bounded from the tree first, so nothing large is ever expanded)."""
        symbol = sympy.Symbol(self.variable, real=True)
        bound = _degree_bound(self.expression, symbol)
        if bound is None or bound > MAX_POLYNOMIAL_DEGREE or not self.expression.is_polynomial(symbol):
            return None
        return int(sympy.Poly(self.expression, symbol).degree()) if self.expression.free_symbols else 0

    @property
    def derivative(self) -> Formula:
        """f' as a formula."""
        derived = sympy.diff(self.expression, sympy.Symbol(self.variable, real=True))
        return Formula(f"d/d{self.variable}({self.text})", derived, self.variable)


def _degree_bound(expression: sympy.Expr, symbol: sympy.Symbol) -> int | None:
    """An upper bound of the polynomial degree of ``expression`` in ``symbol`` from its tree (sums: the largest,
    products: the sum, integer powers: the multiple), None where a node is not polynomial."""
    if not expression.has(symbol):
        return 0
    if expression == symbol:
        return 1
    if expression.is_Add or expression.is_Mul:
        bounds = [_degree_bound(arg, symbol) for arg in expression.args]
        if any(b is None for b in bounds):
            return None
        return max(bounds) if expression.is_Add else sum(bounds)
    if expression.is_Pow and expression.exp.is_Integer and expression.exp >= 0:
        base = _degree_bound(expression.base, symbol)
        return None if base is None else base * int(expression.exp)
    return None


def _compiled(expression: sympy.Expr, variable: str, text: str) -> Callable[[np.ndarray], np.ndarray]:
    symbol = sympy.Symbol(variable, real=True)
    compiled = sympy.lambdify(symbol, expression, modules="numpy")

    def evaluate(t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        with np.errstate(all="ignore"):
            values = np.asarray(compiled(t))
        if np.iscomplexobj(values):
            imaginary = np.abs(values.imag) > 0
            if np.any(imaginary):
                raise ValueError(f"the formula {text!r} is complex at {variable} = "
                                 f"{float(np.broadcast_to(t, values.shape)[imaginary][0]):.17g}; it must be real")
            values = values.real
        return np.broadcast_to(values.astype(float), t.shape)

    return evaluate


def parse_formula(text: str, variable: str = "t", name: str = "kernel") -> Formula:
    """The :class:`Formula` of ``text``, a formula in ``variable`` (module docstring).

    Raises
    ------
    TypeError
        ``text`` is not a string.
    ValueError
        Not a formula of arithmetic, ``variable``, ``pi``, ``e`` and :data:`FUNCTIONS` (the message names
        ``name``, the piece refused and what is allowed), or longer than :data:`MAX_LENGTH` characters.
    """
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a formula string, got {type(text).__name__}")
    allowed = (f"numbers, {variable}, pi, e, + - * / ** and the functions {', '.join(sorted(set(FUNCTIONS)))}")
    if len(text) > MAX_LENGTH:
        raise ValueError(f"{name} {text[:40]!r}… is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except RecursionError:
        raise ValueError(f"{name} {text[:40]!r}… is nested more deeply than a formula may be") from None
    except SyntaxError as err:
        raise ValueError(f"{name} {text!r} is not a formula ({err.msg}); allowed: {allowed}") from None
    builder = _Builder(text, variable, name, allowed)
    try:
        expression = sympy.sympify(builder.build(tree.body))
    except RecursionError:
        raise ValueError(f"{name} {text[:40]!r}… is nested more deeply than a formula may be") from None
    if expression.free_symbols - {sympy.Symbol(variable, real=True)}:
        raise ValueError(f"{name} {text!r} has symbols other than {variable}")
    if expression.has(sympy.I, sympy.zoo, sympy.nan):
        raise ValueError(f"{name} {text!r} is {expression} as a formula: complex or undefined, not a real function of "
                         f"{variable}")
    return Formula(text.strip(), expression, variable)


class _Builder:
    """The sympy expression of an allowed :mod:`ast` tree (module docstring)."""

    def __init__(self, text: str, variable: str, name: str, allowed: str) -> None:
        self.text, self.variable, self.name, self.allowed = text, variable, name, allowed

    def refuse(self, what: str) -> ValueError:
        return ValueError(f"{self.name} {self.text!r} uses {what}, which a formula may not; allowed: {self.allowed}")

    def build(self, node: ast.AST, exponent: bool = False, depth: int = 0) -> sympy.Expr:
        if depth > MAX_DEPTH:
            raise ValueError(f"{self.name} {self.text[:40]!r}… is nested more than {MAX_DEPTH} levels deep")
        depth += 1
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.refuse(f"the constant {value!r}")
            if exponent and isinstance(value, int) and abs(value) <= MAX_INTEGER_EXPONENT:
                return sympy.Integer(value)
            try:
                return sympy.Float(float(value))
            except OverflowError:
                raise ValueError(f"{self.name} {self.text[:40]!r}: the number {str(value)[:20]}… is beyond the "
                                 "largest double") from None
        if isinstance(node, ast.Name):
            if node.id == self.variable:
                return sympy.Symbol(self.variable, real=True)
            if node.id in CONSTANTS:
                return CONSTANTS[node.id]
            raise self.refuse(f"the name {node.id!r}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            operand = self.build(node.operand, exponent, depth)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp):
            if type(node.op) not in _OPERATORS:
                raise self.refuse(f"the operator {_SYMBOLS.get(type(node.op), type(node.op).__name__)!r}")
            power = isinstance(node.op, ast.Pow)
            return _OPERATORS[type(node.op)](self.build(node.left, depth=depth),
                                             self.build(node.right, exponent=power, depth=depth))
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                called = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
                raise self.refuse(f"the call of {called!r}")
            if node.keywords or len(node.args) != 1:
                raise self.refuse(f"{node.func.id} with other than one argument")
            return FUNCTIONS[node.func.id](self.build(node.args[0], depth=depth))
        raise self.refuse(f"the expression {ast.unparse(node)!r}")
