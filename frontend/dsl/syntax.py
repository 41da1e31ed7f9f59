"""The DSL's syntax: lark parse tree -> a small AST whose every node knows its line and column.

The grammar (`grammar.lark`) is LALR(1) with lark's basic lexer, so a parse is one linear
pass, and a syntax error is one `UnexpectedInput` that `parse_program` turns into a located
`DSLError` worded for people ("expected an expression or ')'"), not lark's terminal names.

Newlines end statements. The post-lexer `_Newlines` drops those inside ( ) and [ ] (a call may
span lines) and keeps those inside { } (model, fn and `if` bodies are statement lists).

The AST is plain dataclasses; positions are `(line, col)`, 1-based, as diagnostics print them.
An operator node's position is its operator token, so a shape error points at the `+`.
"""

from __future__ import annotations

import difflib
import os
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache

from irkit.attributes import FileLineColLoc
from irkit.diagnostics import IRError, ParseError

Pos = tuple  # (line, col)


class DSLError(IRError):
    """A located error in a `.irk` program (syntax, names, shapes, types)."""


class DSLSyntaxError(DSLError, ParseError):
    """Text that is not a DSL program."""


# ---------------------------------------------------------------------------------------------
# AST
# ---------------------------------------------------------------------------------------------


@dataclass
class Node:
    pos: Pos


@dataclass
class Name(Node):
    id: str


@dataclass
class Num(Node):
    value: int | float


@dataclass
class ListLit(Node):
    items: list


@dataclass
class Kwarg:
    name: str
    value: Node
    pos: Pos


@dataclass
class Call(Node):
    func: str
    args: list
    kwargs: list      # [Kwarg]


@dataclass
class BinOp(Node):
    op: str
    lhs: Node
    rhs: Node


@dataclass
class UnOp(Node):
    op: str
    operand: Node


@dataclass
class Slice(Node):
    start: Node | None
    stop: Node | None
    step: Node | None


@dataclass
class Index(Node):
    value: Node
    subs: list        # [Node | Slice]


@dataclass
class Block(Node):
    stmts: list
    value: Node


@dataclass
class IfExpr(Node):
    cond: Node
    then: Block
    orelse: "Block | IfExpr"


@dataclass
class TypeExpr(Node):
    dtype: str
    dims: list        # [(int | str, pos)]; empty for a scalar


@dataclass
class GridDecl(Node):
    """`grid g[data=2, model=2]`: a grid of ranks with named axes."""
    name: str
    axes: list        # [(axis name, name pos, size, size pos)]


@dataclass
class Place(Node):
    """One grid axis's placement: `split(1)`, `replicate`, `partial(sum)`."""
    kind: str
    arg: int | float | str | None
    arg_pos: Pos | None


@dataclass
class Placement(Node):
    """`@ g(split(0), replicate)` or `@ g(model=split(1))` after an input or param."""
    grid: str
    places: list      # [(axis name or None, axis pos, Place)], in the written order


@dataclass
class Stage(Node):
    """`stage 1 { ... }`: the statements of one pipeline stage."""
    index: int | float
    body: list


@dataclass
class Input(Node):
    name: str
    type: TypeExpr
    placement: Placement | None = None


@dataclass
class Param(Node):
    name: str
    type: TypeExpr
    init: Call        # `zeros` is Call("zeros", [], [])
    placement: Placement | None = None


@dataclass
class Const(Node):
    name: str
    value: Node


@dataclass
class Assign(Node):
    names: list       # [(name, pos)]; several for `a, b = split(...)`
    value: Node


@dataclass
class Output(Node):
    names: list       # [(name, pos)]


@dataclass
class Grad(Node):
    of: tuple         # (name, pos)
    wrt: list         # [(name, pos)]


@dataclass
class Train(Node):
    loss: tuple       # (name, pos)
    optimizer: Call


@dataclass
class Return(Node):
    values: list


@dataclass
class Model(Node):
    name: str
    body: list


@dataclass
class FnDef(Node):
    name: str
    params: list      # [(name, pos)]
    body: list


@dataclass
class Program:
    items: list = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------


class _Newlines:
    """Post-lexer: drop newline separators inside ( ) and [ ], keep them inside { }."""

    always_accept = ("_SEP",)
    _OPEN = {"LPAR": "(", "LSQB": "(", "LBRACE": "{"}
    _CLOSE = {"RPAR", "RSQB", "RBRACE"}

    def process(self, stream):
        stack = []
        for tok in stream:
            kind = tok.type
            if kind == "_SEP" and tok.value != ";" and stack and stack[-1] == "(":
                continue
            if kind in self._OPEN:
                stack.append(self._OPEN[kind])
            elif kind in self._CLOSE and stack:
                stack.pop()
            yield tok


#: the package's own folder for the parser tables (`_parser_tables`), as for its bytecode
TABLES_BESIDE = os.path.join(os.path.dirname(__file__), "__pycache__")


@lru_cache(maxsize=None)
def _parser():
    from lark import Lark
    path = os.path.join(os.path.dirname(__file__), "grammar.lark")
    with open(path, encoding="utf-8") as f:
        grammar = f.read()
    tables = _parser_tables(grammar)
    # lark reads `cache` when it is there and sound, else builds the tables and writes them
    # there: into a temporary of our own, renamed over the file once whole, so that a process
    # reading it meanwhile never sees half of one (lark writes in place)
    scratch = None if tables is None or os.path.exists(tables) else \
        f"{tables}.{os.getpid()}-{threading.get_ident()}.tmp"
    parser = Lark(grammar, parser="lalr", lexer="basic", postlex=_Newlines(),
                  propagate_positions=True, maybe_placeholders=True,
                  cache=scratch or tables or False)
    if scratch is not None:
        try:
            os.replace(scratch, tables)
        except OSError:             # not written (lark only logs that): nothing to keep
            pass
    return parser


def _parser_tables(grammar: str) -> str | None:
    """Where lark keeps this grammar's LALR tables between processes (building them is
    0.1-0.3 s of a fresh process's first compile; loading them, 5 ms), or None (no cache:
    `IRKIT_CACHE_DIR` set empty, and no tables beside the package).

    The tables depend only on the grammar, lark's version and Python's, all of which lark
    checks before using a file (a stale or damaged one is rebuilt). So, as Python keeps
    bytecode: beside the package (its `__pycache__`) where that folder is writable or the
    file is already there, and every process of every user (a fresh cache folder
    included, as the compile-time benchmark's) loads them; else in the user's cache folder
    (`irkit.user_cache`)."""
    import hashlib
    from irkit.user_cache import cache_directory
    name = f"dsl-grammar-{hashlib.sha256(grammar.encode('utf-8')).hexdigest()[:16]}.lark"
    folder = cache_directory()
    if folder is None:
        # caching nothing writes nothing, but the tables beside the package are part of it
        # as its bytecode is: read (a cold compile with `IRKIT_CACHE_DIR=` spent 0.07 s
        # building them again)
        beside = os.path.join(TABLES_BESIDE, name)
        return beside if os.path.isfile(beside) else None
    for where in (TABLES_BESIDE, folder):
        try:
            os.makedirs(where, exist_ok=True)
        except OSError:
            continue
        path = os.path.join(where, name)
        if os.path.isfile(path) or os.access(where, os.W_OK):
            return path
    return None


def parse_program(text: str, filename: str) -> Program:
    """Parse DSL text into a `Program`, or raise a located `DSLSyntaxError`."""
    from lark.exceptions import UnexpectedInput
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as e:
        raise _syntax_error(e, text, filename) from None
    return _Builder(filename).program(tree)


def _tpos(tok) -> Pos:
    return (tok.line, tok.column)


def _is_tok(x, kind: str) -> bool:
    from lark import Token
    return isinstance(x, Token) and x.type == kind


class _Builder:
    """Lark tree -> AST, one method per rule (a recursive walk, so every node is built
    exactly once and positions come from the tokens themselves)."""

    def __init__(self, filename: str) -> None:
        self.filename = filename

    def program(self, tree) -> Program:
        return Program([self.item(c) for c in tree.children])

    def item(self, t):
        if t.data == "model":
            name = t.children[0]
            return Model(_tpos(name), str(name), self.body(t.children[1:]))
        if t.data == "fn_def":
            name = t.children[0]
            params, rest = [], t.children[1:]
            while rest and _is_tok(rest[0], "NAME") or (rest and rest[0] is None):
                if rest[0] is not None:
                    params.append((str(rest[0]), _tpos(rest[0])))
                rest = rest[1:]
            return FnDef(_tpos(name), str(name), params, self.body(rest))
        return self.stmt(t)

    def body(self, children) -> list:
        return [self.stmt(c) for c in children]

    def stmt(self, t):
        c = t.children
        kind = t.data
        if kind == "input_decl":
            return Input(_tpos(c[1]), str(c[1]), self.type(c[2]), self.placement(c[3]))
        if kind == "param_decl":
            init_name = c[3]
            args, kwargs = self.arguments(c[5]) if len(c) > 5 else ([], [])
            init = Call(_tpos(init_name), str(init_name), args, kwargs)
            return Param(_tpos(c[1]), str(c[1]), self.type(c[2]), init, self.placement(c[6]))
        if kind == "grid_decl":
            axes = [(str(a.children[0]), _tpos(a.children[0]), _number(str(a.children[1])),
                     _tpos(a.children[1])) for a in c[3:] if getattr(a, "data", None)]
            return GridDecl(_tpos(c[1]), str(c[1]), axes)
        if kind == "stage_block":
            return Stage(_tpos(c[0]), _number(str(c[1])), self.body(c[3:]))
        if kind == "const_decl":
            return Const(_tpos(c[1]), str(c[1]), self.expr(c[2]))
        if kind == "assign":
            return Assign(_tpos(c[0]), [(str(c[0]), _tpos(c[0]))], self.expr(c[1]))
        if kind == "tuple_assign":
            names = [(str(n), _tpos(n)) for n in c[:-1]]
            return Assign(names[0][1], names, self.expr(c[-1]))
        if kind == "output_stmt":
            return Output(_tpos(c[0]), [(str(n), _tpos(n)) for n in c[1:]])
        if kind == "grad_stmt":
            return Grad(_tpos(c[0]), (str(c[1]), _tpos(c[1])),
                        [(str(n), _tpos(n)) for n in c[2:]])
        if kind == "train_stmt":
            opt = c[2]
            args, kwargs = self.arguments(c[4])
            return Train(_tpos(c[0]), (str(c[1]), _tpos(c[1])),
                         Call(_tpos(opt), str(opt), args, kwargs))
        if kind == "return_stmt":
            return Return(_tpos(c[0]), [self.expr(e) for e in c[1:]])
        raise AssertionError(f"unknown statement rule {kind}")

    def placement(self, t) -> Placement | None:
        """The optional `@ grid(...)` of an input or param (None when absent)."""
        if t is None:
            return None
        at, grid = t.children[0], t.children[1]
        if at != "@":
            raise DSLSyntaxError(f"unexpected '{at}'; expected '@' before a placement",
                                 FileLineColLoc(self.filename, *_tpos(at)))
        places = []
        for a in t.children[3:]:
            if a is None or _is_tok(a, "RPAR"):
                continue
            if a.data == "axis_place":
                places.append((str(a.children[0]), _tpos(a.children[0]),
                               self.place(a.children[1])))
            else:
                place = self.place(a)
                places.append((None, place.pos, place))
        return Placement(_tpos(grid), str(grid), places)

    def place(self, t) -> Place:
        name, arg = t.children[0], next((x for x in t.children[2:] if x is not None
                                         and not _is_tok(x, "RPAR")), None)
        value = None if arg is None else _number(str(arg)) if _is_tok(arg, "NUMBER") \
            else str(arg)
        return Place(_tpos(name), str(name), value, None if arg is None else _tpos(arg))

    def type(self, t) -> TypeExpr:
        c = t.children
        dims = []
        for d in c[2:]:
            if d is None or _is_tok(d, "RSQB"):
                continue
            dims.append((int(d) if _is_tok(d, "NUMBER") and d.isdigit() else
                         (float(d) if _is_tok(d, "NUMBER") else str(d)), _tpos(d)))
        shaped = len(c) > 1 and c[1] is not None
        return TypeExpr(_tpos(c[0]), str(c[0]), dims if shaped else [])

    def arguments(self, t):
        args, kwargs = [], []
        if t is None:
            return args, kwargs
        for a in t.children:
            if a is None:
                continue
            if not _is_tok(a, "NAME") and getattr(a, "data", None) == "kwarg":
                name = a.children[0]
                kwargs.append(Kwarg(str(name), self.expr(a.children[1]), _tpos(name)))
            else:
                args.append(self.expr(a))
        return args, kwargs

    def expr(self, t):
        from lark import Token
        if isinstance(t, Token):
            if t.type == "NAME":
                return Name(_tpos(t), str(t))
            return Num(_tpos(t), _number(str(t)))
        kind = t.data
        c = t.children
        if kind == "name":
            return Name(_tpos(c[0]), str(c[0]))
        if kind == "number":
            return Num(_tpos(c[0]), _number(str(c[0])))
        if kind == "binop":
            op = c[1]
            return BinOp(_tpos(op), str(op), self.expr(c[0]), self.expr(c[2]))
        if kind == "unop":
            op = c[0]
            return UnOp(_tpos(op), str(op), self.expr(c[1]))
        if kind == "call":
            args, kwargs = self.arguments(c[2])
            return Call(_tpos(c[0]), str(c[0]), args, kwargs)
        if kind == "list":
            return ListLit(_tpos(c[0]), [self.expr(e) for e in c[1:] if e is not None])
        if kind == "index":
            return Index(_tpos(c[1]), self.expr(c[0]), [self.subscript(s) for s in c[2:]])
        if kind == "if_expr":
            return IfExpr(_tpos(c[0]), self.expr(c[1]), self.block(c[2]),
                          self.block(c[3]) if c[3].data == "block" else self.expr(c[3]))
        raise AssertionError(f"unknown expression rule {kind}")

    def subscript(self, t):
        if getattr(t, "data", None) != "slice":
            return self.expr(t)
        c = t.children
        colon = next(x for x in c if _is_tok(x, "COLON"))
        parts = [x for x in c if not _is_tok(x, "COLON")]
        start, stop, step = (self.expr(p) if p is not None else None for p in parts[:3])
        return Slice(_tpos(colon), start, stop, step)

    def block(self, t) -> Block:
        c = t.children
        return Block(_tpos(c[0]), [self.stmt(s) for s in c[1:-1]], self.expr(c[-1]))


def _number(text: str) -> int | float:
    if any(ch in text for ch in ".eE"):
        return float(text)
    return int(text)


# ---------------------------------------------------------------------------------------------
# Syntax errors in words
# ---------------------------------------------------------------------------------------------

_WORDS = {
    "NAME": "a name", "NUMBER": "a number", "_SEP": "a new line", "$END": "the end of the file",
    "COMP": "a comparison", "ADDOP": "'+' or '-'", "MULOP": "'*', '/' or '@'", "POW": "'**'",
    "INPUT": "'input'", "PARAM": "'param'", "CONST": "'const'", "OUTPUT": "'output'",
    "GRAD": "'grad'", "TRAIN": "'train'", "RETURN": "'return'", "IF": "'if'", "OR": "'or'",
    "AND": "'and'", "NOT": "'not'", "COLON": "':'", "LPAR": "'('", "RPAR": "')'",
    "LSQB": "'['", "RSQB": "']'", "LBRACE": "'{'", "RBRACE": "'}'", "COMMA": "','",
    "EQUAL": "'='", "SEMICOLON": "';'", "MODEL": "'model'", "FN": "'fn'", "ELSE": "'else'",
    "WRT": "'wrt'", "WITH": "'with'", "GRID": "'grid'", "STAGE": "'stage'",
}
#: when all of these are expected, an expression may start here: say "an expression"
_EXPR_START = {"NAME", "NUMBER", "LPAR"}
_EXPR_TOKENS = {"NAME", "NUMBER", "LPAR", "LSQB", "ADDOP", "NOT", "IF"}
#: statement keywords: when several are expected (with a name), say "a statement"
_STMT_START = {"INPUT", "PARAM", "CONST", "OUTPUT", "GRAD", "TRAIN", "RETURN", "GRID", "STAGE"}
#: binary operators: when several are expected, say "an operator"
_OPERATORS = {"COMP", "ADDOP", "MULOP", "POW", "AND", "OR"}
#: the keywords by terminal, to name the one a misspelled word most likely is
_KEYWORDS = {t: w[1:-1] for t, w in _WORDS.items() if w[1:-1].isalpha() and w[0] == "'"}
#: the keywords that begin a declaration or statement (`inptu x` -> did you mean 'input'?)
_DECLARATIONS = ("model", "fn", "const", "input", "param", "output", "grad", "train", "return")
#: one word, then blanks, at the start of a statement (after a line start, `;` or `{`)
_LEADING_WORD = re.compile(r"(?:^|[;{])[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]+\Z")


def _describe_expected(expected) -> str:
    names = {e for e in expected if not e.startswith("__")}
    parts = []
    if _EXPR_START <= names:
        parts.append("an expression")
        names -= _EXPR_TOKENS
    if "NAME" in names and len(names & _STMT_START) >= 3:
        parts.append("a statement")
        names -= _STMT_START | {"NAME"}
    if len(names & _OPERATORS) >= 3:
        parts.append("an operator")
        names -= _OPERATORS
    parts += sorted(_WORDS.get(n, f"'{n.lower()}'") for n in names)
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def _describe_token(tok) -> str:
    kind = tok.type
    if kind == "$END":
        return "end of file"
    if kind == "_SEP":
        return "end of line" if tok.value != ";" else "';'"
    if kind == "NAME":
        return f"name '{tok.value}'"
    if kind == "NUMBER":
        return f"number {tok.value}"
    if tok.value.isalpha():
        return f"keyword '{tok.value}'"
    return f"'{tok.value}'"


def _syntax_error(e, text: str, filename: str) -> DSLSyntaxError:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken
    line = getattr(e, "line", None)
    col = getattr(e, "column", None)
    if isinstance(e, UnexpectedToken) and e.token.type == "$END" or isinstance(e, UnexpectedEOF) \
            or line is None or line < 1:
        line, col = _end_position(text)
        found = "end of file"
    elif isinstance(e, UnexpectedToken):
        found = _describe_token(e.token)
    elif isinstance(e, UnexpectedCharacters):
        found = f"character {text[e.pos_in_stream]!r}" if 0 <= e.pos_in_stream < len(text) \
            else "character"
    else:
        found = "input"
    # `accepts` runs the parser's pending reductions, so it lists only what can really come
    # next; `expected` (LALR's merged lookaheads) is the fallback.
    expected = set()
    if isinstance(e, UnexpectedToken):
        try:
            expected = e.accepts or e.expected
        except Exception:           # noqa: BLE001 - an older lark without interactive parsing
            expected = e.expected
    if isinstance(e, UnexpectedToken):
        misspelled = _misspelled_keyword(e.token, expected, text, filename)
        if misspelled is not None:
            return misspelled
    if found == "end of file":          # say what is left open, not every statement keyword
        closers = [k for k in ("RPAR", "RSQB", "RBRACE") if k in expected]
        expected = closers[:1] or expected
    want = _describe_expected(expected)
    msg = f"unexpected {found}" + (f"; expected {want}" if want else "")
    return DSLSyntaxError(msg, FileLineColLoc(filename, line, col))


def _misspelled_keyword(tok, expected, text: str, filename: str) -> DSLSyntaxError | None:
    """`unknown declaration 'inptu'; did you mean 'input'?` where a name stands for a
    misspelled keyword, found by difflib among the keywords that fit:

    1. a statement that starts with a word and goes on with a name or number (`inptu x: ...`,
       `retrun 1`): no statement does that, so the word is taken for a declaration keyword;
    2. a name where only keywords fit (`modle m {` at the top level, `grad l wtr W`).

    None when no keyword is close, so the plain "unexpected ..." message stands.
    """
    if tok.type not in ("NAME", "NUMBER") or tok.line is None:
        return None
    line = text.split("\n")[tok.line - 1]
    lead = _LEADING_WORD.search(line[: tok.column - 1])
    if lead is not None:
        word, line_col, words = lead.group(1), (tok.line, lead.start(1) + 1), _DECLARATIONS
    elif tok.type == "NAME" and "NAME" not in expected:
        word, line_col = str(tok), (tok.line, tok.column)
        words = [_KEYWORDS[t] for t in sorted(expected) if t in _KEYWORDS]
    else:
        return None
    close = difflib.get_close_matches(word, words, n=1)
    if not close:
        return None
    what = "unknown declaration" if close[0] in _DECLARATIONS else "unexpected name"
    return DSLSyntaxError(f"{what} '{word}'; did you mean '{close[0]}'?",
                          FileLineColLoc(filename, *line_col))


def _end_position(text: str) -> Pos:
    """Where "end of file" points: just after the last non-blank character."""
    stripped = text.rstrip()
    lines = stripped.split("\n")
    return (len(lines), len(lines[-1]) + 1) if stripped else (1, 1)
