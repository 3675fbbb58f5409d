"""Tests for symgrad.parser: precedence, values, rejections, limits and round trips."""
from __future__ import annotations

import doctest
import math
import pickle
import random
import sys

import pytest

import symgrad.symbolic.parser as parser_module
from conftest import calls_made
from symgrad.symbolic.parser import (COMPOSITIONS, 
    FUNCTIONS,
    MAX_DEPTH,
    MAX_LENGTH,
    MAX_TOKENS,
    BinOp,
    Call,
    Name,
    Neg,
    Num,
    ParseError,
    Transpose,
    Vector,
    free_variables,
    parse,
    parse_value,
    parse_value_node,
    to_text,
)

x, y, z, a, b, c = (Name(n) for n in "xyzabc")


def add(left, right):
    return BinOp("+", left, right)


def sub(left, right):
    return BinOp("-", left, right)


def mul(left, right):
    return BinOp("*", left, right)


def div(left, right):
    return BinOp("/", left, right)


def pow_(left, right):
    return BinOp("**", left, right)


def matmul(left, right):
    return BinOp("@", left, right)


def error_of(text: str, **limits) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(text, **limits)
    return info.value


def value_error_of(text: str, **limits) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse_value(text, **limits)
    return info.value


# ----------------------------------------------------------------- precedence

@pytest.mark.parametrize("text, expected", [
    ("x", x),
    ("  x  ", x),
    ("x + y * z", add(x, mul(y, z))),
    ("x * y + z", add(mul(x, y), z)),
    ("a - b - c", sub(sub(a, b), c)),
    ("a - (b - c)", sub(a, sub(b, c))),
    ("a / b / c", div(div(a, b), c)),
    ("a / b * c", mul(div(a, b), c)),
    ("a @ b @ c", matmul(matmul(a, b), c)),
    ("a + b @ c", add(a, matmul(b, c))),
    ("a * b @ c", matmul(mul(a, b), c)),
    ("a ** b ** c", pow_(a, pow_(b, c))),
    ("(a ** b) ** c", pow_(pow_(a, b), c)),
    ("a ^ b ^ c", pow_(a, pow_(b, c))),
    ("a^2", pow_(a, Num(2))),
    ("a * b ** c", mul(a, pow_(b, c))),
    ("a ** b * c", mul(pow_(a, b), c)),
    ("-x", Neg(x)),
    ("+x", x),
    ("--x", Neg(Neg(x))),
    ("-+-x", Neg(Neg(x))),
    ("-x ** 2", Neg(pow_(x, Num(2)))),
    ("(-x) ** 2", pow_(Neg(x), Num(2))),
    ("2 ** -1", pow_(Num(2), Neg(Num(1)))),
    ("2 ** -x ** 2", pow_(Num(2), Neg(pow_(x, Num(2))))),
    ("a ** -b * c", mul(pow_(a, Neg(b)), c)),
    ("-x * y", mul(Neg(x), y)),
    ("-x + y", add(Neg(x), y)),
    ("x - -y", sub(x, Neg(y))),
    ("x * -y", mul(x, Neg(y))),
    ("x.T", Transpose(x)),
    ("x.T.T", Transpose(Transpose(x))),
    ("-x.T", Neg(Transpose(x))),
    ("x ** y.T", pow_(x, Transpose(y))),
    ("x.T ** 2", pow_(Transpose(x), Num(2))),
    ("(x + y).T", Transpose(add(x, y))),
    ("x.T @ A @ x", matmul(matmul(Transpose(x), Name("A")), x)),
    ("2.T", Transpose(Num(2))),
    ("sin(x).T", Transpose(Call("sin", (x,)))),
    ("sin(x)", Call("sin", (x,))),
    ("sin (x)", Call("sin", (x,))),
    ("dot(x, y + 1)", Call("dot", (x, add(y, Num(1))))),
    ("exp(-x**2 / 2)", Call("exp", (div(Neg(pow_(x, Num(2))), Num(2)),))),
    ("log_softmax(W @ x + b)", Call("log_softmax",
                                    (add(matmul(Name("W"), x), b),))),
    ("sin(cos(tan(x)))", Call("sin", (Call("cos", (Call("tan", (x,)),)),))),
    ("((x))", x),
    ("pi * e", mul(Name("pi"), Name("e"))),
    ("x\n+\ty", add(x, y)),
])
def test_structure(text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize("text, value", [
    ("2", 2), ("0", 0), ("1.5", 1.5), (".5", 0.5), ("2.", 2.0), ("1e-3", 0.001),
    ("2E+5", 2e5), ("2.e5", 2e5), ("0.25e1", 2.5), ("0e0", 0.0), ("1" * 100, int("1" * 100)),
    ("1e-400", 0.0),
])
def test_numerals(text, value):
    node = parse(text)
    assert node == Num(value)
    assert type(node.value) is type(value)


def test_positions():
    node = parse("a + sin(b) * c.T")
    assert node.pos == 2
    assert node.left.pos == 0
    assert node.right.pos == 11
    assert node.right.left.pos == 4
    assert node.right.left.args[0].pos == 8
    assert node.right.right.pos == 14
    assert node.right.right.operand.pos == 13
    assert parse("- x").pos == 0
    assert parse("(x)").pos == 1


def test_equality_ignores_positions_and_nodes_are_immutable():
    assert parse("x + y") == parse("  x+   y")
    assert hash(parse("x + y")) == hash(parse("  x+   y"))
    with pytest.raises(AttributeError):
        parse("x").name = "y"  # type: ignore[misc]


def test_free_variables():
    assert free_variables(parse("y * exp(x) + e**y - x.T @ A + pi")) == ["y", "x", "A"]
    assert free_variables(parse("2 * pi")) == []
    assert free_variables(parse("dot(b, a) + c")) == ["b", "a", "c"]
    assert free_variables(parse_value_node("[1, 2]")) == []


def test_depth_limit_boundary():
    ok = "x" + "+x" * (MAX_DEPTH - 1)
    assert parse(ok).op == "+"
    err = error_of(ok + "+x")
    assert "too deeply nested" in err.message
    assert err.column == 2 * MAX_DEPTH
    assert parse("(" * MAX_DEPTH + "x" + ")" * MAX_DEPTH) == x
    err = error_of("(" * (MAX_DEPTH + 1) + "x" + ")" * (MAX_DEPTH + 1))
    assert "nested brackets" in err.message and err.column == MAX_DEPTH + 1


# --------------------------------------------------------------------- values

@pytest.mark.parametrize("text, value", [
    ("4", 4.0),
    ("-0.5", -0.5),
    (" 1e3 ", 1000.0),
    ("[1, 2, 3]", [1.0, 2.0, 3.0]),
    ("[[1,2],[3,4]]", [[1.0, 2.0], [3.0, 4.0]]),
    ("[[[1], [-2]]]", [[[1.0], [-2.0]]]),
    ("[\n  1,\n  -2.5\n]", [1.0, -2.5]),
])
def test_parse_value(text, value):
    result = parse_value(text)
    assert result == value
    flat = result if isinstance(result, list) else [result]
    while flat and isinstance(flat[0], list):
        flat = [v for row in flat for v in row]
    assert all(type(v) is float for v in flat)


def test_parse_value_node():
    node = parse_value_node("[[1, -2], [3, 4.5]]")
    assert node == Vector((Vector((Num(1), Num(-2))), Vector((Num(3), Num(4.5)))))
    assert node.items[0].items[1].pos == 5
    assert to_text(node) == "[[1, -2], [3, 4.5]]"
    assert parse_value_node(to_text(node)) == node


@pytest.mark.parametrize("text, column, fragment", [
    ("", 1, "expected a number or '['"),
    ("pi/2", 1, "nothing is evaluated"),
    ("x", 1, "name 'x'"),
    ("1 + 2", 3, "expected end of input after the value"),
    ("--1", 2, "expected a number after '-'"),
    ("-[1]", 2, "expected a number after '-'"),
    ("+1", 1, "found '+'"),
    ("[]", 1, "empty lists"),
    ("[1, 2,]", 7, "found ']'"),
    ("[1, 2", 6, "expected ',' or ']' to close '[' at column 1, found end of input"),
    ("[1 2]", 4, "expected ',' or ']'"),
    ("1]", 2, "expected end of input"),
    ("[[1, 2], [3]]", 10, "inconsistent list lengths"),
    ("[[1, 2], 3]", 10, "cannot mix numbers and lists"),
    ("[1, [2]]", 5, "cannot mix numbers and lists"),
    ("[1e400]", 2, "overflows"),
    ("[1, 'a']", 5, "string literals"),
])
def test_parse_value_rejects(text, column, fragment):
    err = value_error_of(text)
    assert err.column == column, str(err)
    assert fragment in str(err)


def work(fn) -> int:
    """How many functions ``fn()`` calls (a ParseError is its outcome)."""
    return calls_made(fn, ParseError)


def test_parse_value_limits_bound_the_work():
    big = 10 ** 7
    deep = "[" * 100_000 + "1" + "]" * 100_000
    err = value_error_of(deep, max_length=big, max_tokens=big)
    assert "nested brackets" in err.message and err.column == MAX_DEPTH + 1
    # refused at the limit: work in proportion to the limit, not to the input
    assert work(lambda: parse_value(deep, max_length=big, max_tokens=big)) < 20 * MAX_DEPTH
    long = "[" + "1," * 500_000 + "1]"
    assert "too long" in value_error_of(long).message
    assert work(lambda: parse_value(long)) < 100
    many = "[" + "1," * 4000 + "1]"
    assert "too many tokens" in value_error_of(many).message
    assert work(lambda: parse_value(many)) < 20 * MAX_TOKENS


# ----------------------------------------------------------------- rejections

@pytest.mark.parametrize("text, column, fragment", [
    # unbalanced parentheses, both ways
    ("(x + y", 7, "expected ')' to close '(' at column 1, found end of input"),
    ("sin(x + 1", 10, "expected ')' to close '(' at column 4, found end of input"),
    ("dot(x", 6, "expected ',' or ')' to close '(' at column 4"),
    ("((x + y)", 9, "expected ')' to close '(' at column 1"),
    ("x + y)", 6, "unmatched ')'"),
    ("(x))", 4, "unmatched ')'"),
    (")", 1, "expected an expression, found ')'"),
    ("()", 2, "expected an expression after '(', found ')'"),
    ("x]", 2, "unmatched ']'"),
    ("(x]", 3, "expected ')' to close '(' at column 1, found ']'"),
    # functions
    ("sinn(x)", 1, "unknown function 'sinn'; did you mean 'sin'?"),
    ("softmx(x)", 1, "did you mean 'softmax'?"),
    ("qqq(x)", 1, "known functions: abs, acos"),
    ("x(y + 1)", 1, "for multiplication write 'x*(...)'"),
    ("pi(2)", 1, "'pi' is a constant, not a function"),
    ("eval(x)", 1, "unknown function 'eval'"),
    ("sin", 1, "'sin' is a function; call it with parentheses, e.g. 'sin(x)'"),
    ("x + dot", 5, "e.g. 'dot(x, y)'"),
    ("sin x", 1, "'sin' is a function"),
    ("sin()", 1, "sin() takes 1 argument but 0 were given"),
    ("sin(x, y)", 1, "sin() takes 1 argument but 2 were given"),
    ("dot(x)", 1, "dot() takes 2 arguments but 1 was given"),
    ("x + dot(x, y, z)", 5, "dot() takes 2 arguments but 3 were given"),
    ("dot(x, )", 8, "expected an expression after ',', found ')'"),
    ("sum(x, axis=0)", 12, "'=' is not allowed"),
    # numerals (see module docstring: errors point at the offending character)
    ("1.2.3", 4, "malformed numeral '1.2.3': a numeral can have only one decimal point"),
    ("x + 1..2", 7, "only one decimal point"),
    ("1.2.", 4, "only one decimal point"),
    ("1e5.", 4, "unexpected '.' after the exponent"),
    ("1e", 2, "malformed numeral '1e': expected digits after the exponent"),
    ("2e+", 2, "malformed numeral '2e+'"),
    ("3E-x", 2, "malformed numeral '3E-'"),
    ("2e + 1", 2, "write '2*e'"),
    ("08", 1, "leading zeros are not allowed in numeral '08'; write '8'"),
    ("x + 007", 5, "write '7'"),
    ("00.5", 1, "write '0.5'"),
    ("1_000", 2, "underscores"),
    ("0x1F", 1, "hexadecimal"),
    ("1" * 101, 1, "numeral is too long: 101 digits (the limit is 100)"),
    ("1e400", 1, "numeral '1e400' is too large (it overflows to infinity)"),
    ("x * 1.5e999", 5, "overflows"),
    # trailing / missing operands
    ("x +", 4, "expected an expression after '+', found end of input"),
    ("x *", 4, "expected an expression after '*'"),
    ("x **", 5, "expected an expression after '**'"),
    ("x ^", 4, "expected an expression after '^'"),
    ("-", 2, "expected an expression after '-', found end of input"),
    ("x + * y", 5, "expected an expression after '+', found '*'"),
    ("x *** y", 5, "expected an expression after '**', found '*'"),
    ("* x", 1, "expected an expression, found '*'"),
    (".T", 1, "expected an expression, found '.T'"),
    # empty input
    ("", 1, "empty input: expected an expression"),
    ("   ", 4, "empty input"),
    ("\n\t \n", 1, "line 3, column 1: empty input"),
    # code injection and other Python syntax
    ("__import__('os')", 1, "names starting with '__' are not allowed: '__import__'"),
    ("x.__class__", 2, "attribute access '.__class__' is not allowed"),
    ("x.__class__.__bases__", 2, "attribute access"),
    ('os.system("ls")', 3, "attribute access '.system' is not allowed"),
    ("x.real", 2, "only '.T', the transpose, is supported"),
    ("x.t", 2, "attribute access '.t'"),
    ("x.", 2, "unexpected '.'"),
    ("x . T", 3, "unexpected '.'"),
    ("a; b", 2, "';' is not allowed"),
    ("lambda: 1", 1, "'lambda' is a Python keyword"),
    ("import os", 1, "'import' is a Python keyword"),
    ("x if y else z", 3, "'if' is a Python keyword"),
    ("not x", 1, "Python keyword"),
    ("None", 1, "Python keyword"),
    ("x = 1", 3, "'=' is not allowed"),
    ("x == 1", 3, "'=' is not allowed"),
    ("x < 1", 3, "comparisons are not supported"),
    ("'x'", 1, "string literals are not allowed"),
    ('x + "y"', 5, "string literals are not allowed"),
    ("x // 2", 3, "'//' (floor division) is not supported"),
    ("x %", 4, "expected an expression after '%', found end of input"),
    ("x % % y", 5, "expected an expression after '%', found '%'"),
    ("x | y", 3, "bitwise"),
    ("{x}", 1, "braces"),
    ("x # comment", 3, "comments"),
    ("x \\\n + y", 3, "backslashes"),
    ("x, y", 2, "unexpected ','"),
    ("(x, y)", 3, "expected ')' to close '(' at column 1, found ','"),
    ("[1, 2]", 1, "only allowed in values"),
    ("x[0]", 2, "indexing"),
    ("x $ y", 3, "unexpected character '$'"),
    ("x\x00", 2, "U+0000"),
    ("2π", 2, "write 'pi'"),
    ("x × y", 3, "write '*'"),
    ("été", 1, "only ASCII"),
    # implicit multiplication
    ("2x", 2, "implicit multiplication is not supported: did you mean '2*x'?"),
    ("2 x", 3, "did you mean '2*x'?"),
    ("x y", 3, "did you mean 'x*y'?"),
    ("-3x", 3, "did you mean '3*x'?"),
    ("2(x + 1)", 2, "did you mean '2*(...)'?"),
    ("(a + b)(a - b)", 8, "did you mean '(a + b)*(...)'?"),
    ("2 sin(x)", 3, "did you mean '2*sin(...)'?"),
    ("2exp(x)", 2, "did you mean '2*exp(...)'?"),
    ("x.T y", 5, "did you mean 'x.T*y'?"),
    ("1.5 2", 5, "did you mean '1.5*2'?"),
    # huge exponents
    ("2**99999999", 4, "constant exponent '99999999' is too large"),
    ("x ** 1001", 6, "too large"),
    ("x ** -1001", 6, "too large"),
    ("x ** (2000)", 6, "constant exponent '(2000)'"),
    ("x ^ 1e9", 5, "too large"),
    ("x ** (10 ** 400)", 6, "too large"),
    ("2 ** abs(10 ** 400)", 6, "too large"),
    ("x ** 2 ** 2 ** 2 ** 2", 6, "too large"),
    ("x ** (1 / 0)", 6, "undefined"),
    ("((2**1000)**1000)**1000", 11, "nested powers are too large"),
    ("(x ** 40) ** 40", 11, "multiply to 1600"),
])
def test_rejects(text, column, fragment):
    err = error_of(text)
    assert err.column == column, str(err)
    assert fragment in str(err), str(err)
    assert isinstance(err, ValueError)


def test_accepts_largest_allowed_exponents():
    assert parse("x ** 1000") == pow_(x, Num(1000))
    assert parse("x ** -1000.0") == pow_(x, Neg(Num(1000.0)))
    assert parse("2 ** 3 ** 2") == pow_(Num(2), pow_(Num(3), Num(2)))
    assert parse("(x ** 10) ** 100").op == "**"
    assert parse("x ** y ** 1000").op == "**"
    assert parse("exp(1000) * x ** (pi * 2)").op == "*"


def test_error_attributes_and_pretty():
    text = "a + b\n  * sin(c +\n"
    err = error_of(text)
    assert (err.pos, err.line, err.column) == (len(text), 3, 1)
    assert err.text is text
    assert err.message == ("expected an expression after '+', found end of input")
    assert str(err) == "line 3, column 1: " + err.message

    err = error_of("a +\n  b c")
    assert (err.line, err.column, err.pos) == (2, 5, 8)
    assert "did you mean 'b*c'?" in err.message
    assert err.pretty() == (str(err) + "\n      b c\n        ^")

    err = error_of("x\t+\t)")
    assert err.pretty().splitlines()[1:] == ["    x\t+\t)", "     \t \t^"]

    err = error_of("x +" + " " * 400 + "$")
    lines = err.pretty().splitlines()
    assert len(lines[1]) < 90 and lines[1].startswith("    ...")
    assert lines[2].index("^") == lines[1].index("$")

    copy = pickle.loads(pickle.dumps(err))
    assert (str(copy), copy.pos, copy.column) == (str(err), err.pos, err.column)


def test_type_error_for_non_str():
    with pytest.raises(TypeError):
        parse(b"x")  # type: ignore[arg-type]


# -------------------------------------------------------------- limits, speed

def test_very_long_input_is_rejected_with_bounded_work():
    err = error_of("x+" * 500_000 + "x")
    assert "input is too long: 1000001 characters" in err.message
    assert err.pos == MAX_LENGTH
    err.pretty()
    assert "input is too long" in error_of("x" * (MAX_LENGTH + 1)).message
    assert parse("x" * MAX_LENGTH) == Name("x" * MAX_LENGTH)
    # with raised length limits the other limits still keep it fast
    big = 10 ** 7
    assert "too many tokens" in error_of("+" * 500_000 + "x", max_length=big).message
    assert "too deeply nested" in error_of("x+" * 500_000 + "x", max_length=big,
                                           max_tokens=big).message
    assert parse("y" * 10 ** 6, max_length=big) == Name("y" * 10 ** 6)
    # each is refused at the first limit it meets: work bounded by that limit
    assert work(lambda: parse("x+" * 500_000 + "x")) < 100
    assert work(lambda: parse("+" * 500_000 + "x", max_length=big)) < 10 * MAX_TOKENS
    assert work(lambda: parse("x+" * 500_000 + "x", max_length=big,
                              max_tokens=big)) < 50 * MAX_DEPTH
    assert work(lambda: parse("y" * 10 ** 6, max_length=big)) < 100  # (one name)


def test_very_deep_input_is_rejected_with_bounded_work_without_recursion_error():
    deep = "(" * 100_000 + "x" + ")" * 100_000
    assert "too long" in error_of(deep).message
    big = 10 ** 7
    err = error_of(deep, max_length=big, max_tokens=big)
    assert "too many nested brackets: more than 200 levels" in err.message
    assert err.column == MAX_DEPTH + 1
    # even with the depth limit lifted, the parser does not recurse
    limit = sys.getrecursionlimit()
    assert parse(deep, max_length=big, max_tokens=big, max_depth=big) == x
    assert parse("-" * 5000 + "x", max_tokens=big, max_depth=big).operand.operand
    assert parse("sin(" * 3000 + "x" + ")" * 3000, max_length=big, max_tokens=big,
                 max_depth=big).func == "sin"
    assert sys.getrecursionlimit() == limit
    for text in ["-" * 4000 + "x", "x" + "**x" * 2000, "sin(" * 2000 + "x" + ")" * 2000,
                 "x" + "+x" * 4000, "x" + ".T" * 4000]:
        error_of(text)  # each hits the depth or token limit, never RecursionError
    # refused at the limit, not after reading everything; and without limits the work
    # grows linearly with the input (no recursion, no quadratic step)
    assert work(lambda: parse(deep)) < 100
    assert work(lambda: parse(deep, max_length=big, max_tokens=big)) < 20 * MAX_DEPTH
    for n in (2_000, 20_000):
        text = "(" * n + "x" + ")" * n
        assert work(lambda: parse(text, max_length=big, max_tokens=big,
                                  max_depth=big)) < 10 * len(text)


def test_limits_are_module_constants(monkeypatch):
    monkeypatch.setattr(parser_module, "MAX_LENGTH", 5)
    monkeypatch.setattr(parser_module, "MAX_DEPTH", 2)
    monkeypatch.setattr(parser_module, "MAX_TOKENS", 3)
    monkeypatch.setattr(parser_module, "MAX_NUMERAL_DIGITS", 2)
    monkeypatch.setattr(parser_module, "MAX_EXPONENT", 3)
    assert "too long" in error_of("x+y+zz").message
    assert "too deeply nested" in error_of("--x").message
    assert "nested brackets" in error_of("(((x").message
    assert "too many tokens" in error_of("x+y+").message
    assert "numeral is too long: 3 digits" in error_of("123").message
    assert "too large" in error_of("x**4").message
    assert parse("x+y+z", max_length=10, max_depth=5, max_tokens=5) == add(add(x, y), z)


# ----------------------------------------------------------------- round trips

NAMES = ["x", "y", "z", "A", "w_1", "_b", "T", "pi", "e"]


def random_number(rng: random.Random) -> Num:
    choice = rng.random()
    if choice < 0.5:
        return Num(rng.randint(0, 1000))
    if choice < 0.8:
        return Num(round(rng.uniform(0, 100), rng.randint(0, 6)))
    return Num(rng.uniform(0, 10) * 10.0 ** rng.randint(-30, 30))


def random_variable_tree(rng: random.Random, depth: int):
    """A random tree that certainly contains a free variable (so it is not constant)."""
    return BinOp(rng.choice(["+", "-", "*", "/"]), Name(rng.choice("xyz")),
                 random_tree(rng, depth))


def random_tree(rng: random.Random, depth: int):
    if depth <= 0 or rng.random() < 0.2:
        return random_number(rng) if rng.random() < 0.4 else Name(rng.choice(NAMES))
    kind = rng.choice(["bin", "bin", "bin", "pow", "neg", "T", "call"])
    if kind == "bin":
        op = rng.choice(["+", "-", "*", "/", "@"])
        return BinOp(op, random_tree(rng, depth - 1), random_tree(rng, depth - 1))
    if kind == "pow":
        # Keep constant exponents small so the exponent limits are never hit.
        exponent = rng.choice([
            Num(rng.randint(0, 3)), Neg(Num(rng.randint(0, 3))), Name(rng.choice("xyz")),
            random_variable_tree(rng, depth - 1), Neg(random_variable_tree(rng, depth - 1)),
        ])
        return BinOp("**", random_tree(rng, depth - 1), exponent)
    if kind == "neg":
        return Neg(random_tree(rng, depth - 1))
    if kind == "T":
        return Transpose(random_tree(rng, depth - 1))
    # (compositions, sec(x), are parsed into their bodies: no call of their own to print)
    func = rng.choice(sorted(set(FUNCTIONS) - set(COMPOSITIONS)))
    return Call(func, tuple(random_tree(rng, depth - 1) for _ in range(FUNCTIONS[func])))


def scramble_whitespace(rng: random.Random, text: str) -> str:
    """Replace some of the spaces that separate tokens by other whitespace."""
    return "".join(rng.choice([" ", "\n", "\t", "", "  "]) if ch == " " else ch
                   for ch in text)


def test_round_trip_random_trees():
    rng = random.Random(20240501)
    for _ in range(3000):
        tree = random_tree(rng, rng.randint(0, 6))
        text = to_text(tree)
        assert parse(text) == tree, text
        assert to_text(parse(text)) == text
        assert parse(scramble_whitespace(rng, text)) == tree, text


def test_round_trip_minimal_parentheses():
    for text in ["a - (b - c)", "(a - b) - c", "a / (b * c)", "(-x) ** 2", "-x ** 2",
                 "x ** -y", "(x ** y) ** z", "x ** y ** z", "(a + b).T", "-x.T",
                 "(-x).T", "- -x", "x - -y", "2.T", "(2 ** x).T", "a * -b @ c"]:
        canonical = to_text(parse(text))
        assert parse(canonical) == parse(text)
    assert to_text(parse("a - (b - c)")) == "a - (b - c)"
    assert to_text(parse("((a * b)) + (c)")) == "a * b + c"
    assert to_text(parse("(-x)**2")) == "(-x) ** 2"
    assert to_text(pow_(Num(-2), Num(2))) == "(-2) ** 2"
    assert to_text(Transpose(Num(-2))) == "(-2).T"
    assert to_text(Num(1e-05)) == "1e-05" and parse("1e-05") == Num(1e-05)
    with pytest.raises(ValueError):
        to_text(Num(math.inf))
    with pytest.raises(TypeError):
        to_text("x")  # type: ignore[arg-type]


def test_round_trip_random_values():
    rng = random.Random(7)
    for _ in range(300):
        shape = [rng.randint(1, 3) for _ in range(rng.randint(0, 3))]

        def build(dims):
            if not dims:
                return rng.choice([rng.randint(-50, 50), rng.uniform(-1e3, 1e3)])
            return [build(dims[1:]) for _ in range(dims[0])]

        value = build(shape)
        text = repr(value)
        expected = as_floats(value)
        assert parse_value(text) == expected
        assert parse_value(scramble_whitespace(rng, text)) == expected


def as_floats(value):
    return [as_floats(v) for v in value] if isinstance(value, list) else float(value)


def test_fuzz_never_crashes():
    """Random junk either parses or raises ParseError, quickly and never anything else."""
    rng = random.Random(99)
    alphabet = list("xyz12.e+-*/^@()[],T _ \n;'=") + ["sin(", "dot(", "**", ".T", "pi",
                                                      "1e5", "__", "lambda"]
    for k in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 25)))
        for func in (parse, parse_value):
            try:
                func(text)
            except ParseError as err:
                assert 0 <= err.pos <= len(text)
                assert err.pretty().count("\n") == 2
            if k % 50 == 0:  # (and the work is linear in the text's length)
                assert work(lambda: func(text)) < 4000 + 200 * len(text), text


def test_no_eval_in_source():
    """The parser must not hand text to Python's or sympy's own parsers."""
    import ast

    source = open(parser_module.__file__, encoding="utf-8").read()
    banned = {"eval", "exec", "compile", "literal_eval", "sympify", "parse_expr",
              "__import__"}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            assert node.id not in banned
        elif isinstance(node, ast.Attribute):
            assert node.attr not in banned
        elif isinstance(node, ast.Import):
            assert not {alias.name.split(".")[0] for alias in node.names} & {"ast", "sympy"}
        elif isinstance(node, ast.ImportFrom):
            assert (node.module or "").split(".")[0] not in {"ast", "sympy"}


def test_doctests():
    from symgrad.symbolic import lexer, syntax
    results = [doctest.testmod(m, optionflags=doctest.ELLIPSIS)
               for m in (parser_module, lexer, syntax)]
    assert sum(r.attempted for r in results) > 10
    assert sum(r.failed for r in results) == 0
