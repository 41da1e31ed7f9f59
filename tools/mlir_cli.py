"""mlir-opt's command lines, read by irkit-opt: LLVM's option spellings and MLIR's pass options.

A `RUN:` line written for `mlir-opt` that uses only irkit's passes must run unchanged with
`irkit-opt` in its place. mlir-opt parses its command line with LLVM's option library, which
differs from argparse in ways MLIR's tests rely on:

- A long option may be written with one dash or two: `-split-input-file`,
  `--split-input-file`. argparse reads `-pass-pipeline=...` as `-p` with the value
  `ass-pipeline=...`; here a single dash followed by more than one letter is always a long
  option, as in LLVM.
- An option whose value is optional takes it only after `=`: `-canonicalize in.mlir` and
  `--split-input-file in.mlir` never make `in.mlir` the option's value. A flag takes `=true`
  or `=false` (`-mlir-print-op-generic=false`).
- Every registered pass is an option of its own, `-NAME[=OPTIONS]`, its value the pass's
  options in MLIR's syntax: `-canonicalize='max-iterations=3 test-convergence'`,
  `--inline='op-pipelines=func.func(canonicalize,cse)'`.

`to_argparse(argv, ...)` rewrites such a command line into the spelling irkit-opt's argparse
parser reads (each option `--NAME[=VALUE]`, each pass flag `--passes=ELEMENT` in command-line
order), or raises `UsageError` naming the bad argument. `translate_pipeline` maps MLIR's pass
options to irkit's wherever a pipeline is written (pass flags, `-p`, `--pass-pipeline`,
nested pipelines inside options): one table row per MLIR option that irkit spells
differently or does not have (`MLIR_PASS_OPTIONS`). Options irkit has under the same name
pass through, so irkit's own spellings keep working.

Algorithm (`to_argparse`):
  1. Arguments after `--`, `-` (stdin) and anything not starting with a dash are positional.
  2. `-X`/`-X=V` with a one-letter `X` that irkit-opt declares (`-o`, `-p`, `-h`) is that short
     option; its value is the next argument unless given after `=`.
  3. Otherwise the dashes (one or two) are dropped and the name before `=` is looked up among
     irkit-opt's long options; the option is written back as `--NAME=VALUE` (a required
     value may also be the next argument; an optional one defaults to the option's `const`;
     a flag's value must be a boolean, and `false` drops it).
  4. A name that is a registered pass becomes `--passes=ELEMENT`, ELEMENT the pass with its
     options translated to irkit's.
  5. Anything else is an unknown option, reported with the closest option or pass names.
"""

from __future__ import annotations

import argparse
import difflib
from typing import Callable

from irkit.pass_manager import PassPipelineError


class UsageError(ValueError):
    """A command line irkit-opt cannot read: the message names the argument and, where one
    exists, the option or pass that was probably meant."""


_TRUE = ("true", "1", "")
_FALSE = ("false", "0")


# ---------------------------------------------------------------------------------------------
# Option spellings
# ---------------------------------------------------------------------------------------------


def plugin_paths(argv: list[str]) -> list[str]:
    """The files of every `--load-pass-plugin` in `argv`, in any spelling. Plugins are loaded
    before the command line is read, since they define passes that it may name as flags."""
    out = []
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        name, eq, value = arg.lstrip("-").partition("=")
        if arg.startswith("-") and name == "load-pass-plugin":
            if eq:
                out.append(value)
            elif i + 1 < len(argv):
                out.append(argv[i + 1])
    return out


def to_argparse(argv: list[str], ap: argparse.ArgumentParser,
                is_pass: Callable[[str], bool]) -> list[str]:
    """`argv` in mlir-opt's spelling (or irkit-opt's own) rewritten for `ap`; see the module
    docstring for the rules. Raises `UsageError` or `PassPipelineError`."""
    longs, shorts = _options_of(ap)
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            out.extend(argv[i - 1:])
            break
        if arg == "-" or not arg.startswith("-"):
            out.append(arg)
            continue
        dashes = "--" if arg.startswith("--") else "-"
        name, eq, value = arg[len(dashes):].partition("=")
        if len(name) == 1 and name in shorts:
            action = shorts[name]
        elif name in longs:
            action = longs[name]
        elif is_pass(name):
            out.append(f"--passes={pass_flag_element(name, value if eq else None)}")
            continue
        else:
            raise UsageError(_unknown(arg, dashes, name, longs, shorts))
        if action.nargs == 0:
            if not eq or _boolean(arg, value):
                out.append(_spelling(action))
        elif action.nargs == "?":
            out.append(f"{_spelling(action)}={_choice(action, value) if eq else action.const}")
        elif eq:
            out.append(f"{_spelling(action)}={value}")
        elif i < len(argv):
            out.append(f"{_spelling(action)}={argv[i]}")
            i += 1
        else:
            raise UsageError(f"option '{arg}' requires a value")
    return out


def _options_of(ap: argparse.ArgumentParser) -> tuple[dict, dict]:
    """irkit-opt's long options by name (`split-input-file`) and its one-letter options."""
    longs, shorts = {}, {}
    for action in ap._actions:           # argparse keeps its declared options only here
        for s in action.option_strings:
            if s.startswith("--"):
                longs[s[2:]] = action
            elif len(s) == 2:
                shorts[s[1]] = action
    return longs, shorts


def _spelling(action: argparse.Action) -> str:
    """The spelling argparse is handed: the option's long form, else its short one."""
    return max(action.option_strings, key=len)


def _boolean(arg: str, value: str) -> bool:
    low = value.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise UsageError(f"option '{arg}': '{value}' is not a boolean (true or false)")


def _choice(action: argparse.Action, value: str) -> str:
    """A value of an option whose choices include `true` and `false`, in LLVM's spellings of
    a boolean (`1`, `FALSE`, ...) as well; any other value is left for argparse to check."""
    choices = action.choices or ()
    if "true" in choices and "false" in choices and value.lower() in _TRUE + _FALSE:
        return "true" if value.lower() in _TRUE else "false"
    return value


def _unknown(arg: str, dashes: str, name: str, longs: dict, shorts: dict) -> str:
    from irkit.pass_manager import registered_passes
    names = [n for n in longs if len(n) > 1] + list(registered_passes())
    close = difflib.get_close_matches(name, names, n=1)
    msg = f"unknown option '{arg}'"
    if close:
        msg += f"; did you mean '{dashes}{close[0]}'?"
    near = close and difflib.SequenceMatcher(None, name, close[0]).ratio() >= 0.9
    if dashes == "-" and name[:1] in shorts and not near:
        # `-pcse`: LLVM reads one dash and several letters as one long option, and so do we.
        msg += (f"{' or' if close else ';'} write '-{name[0]} {name[1:].lstrip('=')}' for the "
                f"short option -{name[0]} (one dash and several letters is a long option)")
    return msg + " (see --help and --list-passes)"


# ---------------------------------------------------------------------------------------------
# MLIR's pass options
# ---------------------------------------------------------------------------------------------


def pass_flag_element(name: str, options: str | None) -> str:
    """The pipeline element for the pass flag `-NAME[=OPTIONS]`, options in MLIR's syntax
    (`max-iterations=3 test-convergence`) translated to irkit's."""
    if not options:
        return name
    return _element(name, translate_options(name, split_options(name, options)))


def split_options(pass_name: str, text: str) -> list[tuple[str, str | None]]:
    """MLIR's option list `key=value key2={a b} key3="x" flag` as (key, value) pairs, value
    None for a bare key. Values in `{...}` or quotes lose their delimiters (MLIR's own
    rule); a bare value runs to the next space outside brackets."""
    out: list[tuple[str, str | None]] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        j = i
        while j < n and not text[j].isspace() and text[j] != "=":
            j += 1
        key = text[i:j]
        if j >= n or text[j] != "=":
            out.append((key, None))
            i = j
            continue
        j += 1
        if j < n and text[j] in "{\"'":
            end = _closing(text, j)
            if end < 0:
                raise PassPipelineError(f"'{pass_name}': unterminated value of option "
                                        f"'{key}' in '{text}'")
            out.append((key, text[j + 1:end]))
            i = end + 1
        else:
            k, depth = j, 0
            while k < n and (depth or not text[k].isspace()):
                depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(text[k], 0)
                k += 1
            out.append((key, text[j:k]))
            i = k
    return out


def _closing(text: str, start: int) -> int:
    """Index of the delimiter closing the one at `start` (`{` nests, quotes do not), or -1."""
    if text[start] in "\"'":
        return text.find(text[start], start + 1)
    depth, quote = 0, None
    for k in range(start, len(text)):
        c = text[k]
        if quote:
            quote = None if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return k
    return -1


def translate_options(pass_name: str, options: list[tuple[str, str | None]]
                      ) -> list[tuple[str, str | None]]:
    """MLIR's options of `pass_name` as irkit's: each option in `MLIR_PASS_OPTIONS` is
    rewritten by its rule, any other passes through (irkit's own names, or a misspelling the
    pass then reports). A later option overrides an earlier one of the same irkit name."""
    rules = MLIR_PASS_OPTIONS.get(pass_name, {})
    out: dict[str, str | None] = {}
    # `op-pipelines` last: its func.func entry overrides `default-pipeline` (see its rule).
    for key, value in sorted(options, key=lambda kv: kv[0] == "op-pipelines"):
        rule = rules.get(key)
        for k, v in (rule(pass_name, key, value) if rule else [(key, value)]):
            out.pop(k, None)
            out[k] = v
    return list(out.items())


def translate_pipeline(text: str) -> str:
    """Pipeline text with every pass's MLIR options translated to irkit's. Text this cannot
    split into elements is returned unchanged, for the pass manager to report."""
    try:
        return ",".join(_translate_element(e) for e in _split_top(text))
    except _Unbalanced:
        return text


class _Unbalanced(Exception):
    pass


def _split_top(text: str) -> list[str]:
    parts, depth, start, quote = [], 0, 0, None
    for i, c in enumerate(text):
        if quote:
            quote = None if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c in "({":
            depth += 1
        elif c in ")}":
            depth -= 1
            if depth < 0:
                raise _Unbalanced
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth or quote:
        raise _Unbalanced
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _translate_element(element: str) -> str:
    paren, brace = element.find("("), element.find("{")
    if paren >= 0 and (brace < 0 or paren < brace) and element.endswith(")"):
        return f"{element[:paren].strip()}({translate_pipeline(element[paren + 1:-1])})"
    if brace >= 0 and element.endswith("}"):
        name = element[:brace].strip()
        opts = split_options(name, element[brace + 1:-1])
        return _element(name, translate_options(name, opts))
    return element


def _element(name: str, options: list[tuple[str, str | None]]) -> str:
    """`name{k=v ...}` in irkit's option syntax: a value with spaces, brackets or commas is
    quoted (irkit's option reader ends a bare value at a space and does not nest braces)."""
    if not options:
        return name
    parts = []
    for key, value in options:
        if value is None:
            parts.append(key)
        elif any(c.isspace() or c in "{}(),\"" for c in value):
            quote = "'" if '"' in value else '"'
            parts.append(f"{key}={quote}{value}{quote}")
        else:
            parts.append(f"{key}={value}")
    return f"{name}{{{' '.join(parts)}}}"


# ----- the table --------------------------------------------------------------------------
#
# A rule takes (pass, MLIR option, value or None for a bare key) and returns irkit's options
# for it: [] where irkit already behaves as the option asks, or raises PassPipelineError
# where irkit cannot honour it.


def _bool_value(pass_name: str, key: str, value: str | None) -> bool:
    low = (value or "").lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise PassPipelineError(f"'{pass_name}' option '{key}': cannot read '{value}' as bool")


def _region_simplify(pass_name, key, value):
    """MLIR's levels `disabled | normal | aggressive`; irkit's option is a bool (what irkit
    does when it is on, erasing unreachable blocks, is less than either of MLIR's levels)."""
    levels = {"disabled": "false", "normal": "true", "aggressive": "true"}
    if value in levels:
        return [(key, levels[value])]
    if value is not None and value.lower() in _TRUE + _FALSE:
        return [(key, value)]
    raise PassPipelineError(f"'{pass_name}' option '{key}': expected disabled, normal or "
                            f"aggressive (or irkit's true / false), got '{value}'")


def _test_convergence(pass_name, key, value):
    """irkit's canonicalizer always fails when it does not converge within `max-iterations`
    (MLIR does only under test-convergence), so either value asks nothing more of it."""
    _bool_value(pass_name, key, value)
    return []


def _top_down(pass_name, key, value):
    """How MLIR seeds its worklist; irkit's driver sweeps in one order and reaches the
    fixpoint either way, so the option is read and has no effect."""
    _bool_value(pass_name, key, value)
    return []


def _only_default(default: str, meaning: str):
    """A rule for an option irkit supports only at MLIR's default value (no limit)."""
    def rule(pass_name, key, value):
        if value == default:
            return []
        raise PassPipelineError(f"'{pass_name}' option '{key}' is not supported by irkit "
                                f"except at its default {default} ({meaning}); got '{value}'")
    return rule


def _unsupported(what: str):
    def rule(pass_name, key, value):
        raise PassPipelineError(f"'{pass_name}' option '{key}' is not supported by irkit "
                                f"({what})")
    return rule


def _nested_pipeline(pass_name, key, value):
    return [(key, translate_pipeline(value or ""))]


def _op_pipelines(pass_name, key, value):
    """MLIR's `op-pipelines=func.func(P)`: P simplifies callables that are `func.func`. Those
    are the only callables irkit's inliner knows, so P becomes its `default-pipeline`."""
    out = []
    try:
        entries = _split_top(value or "")
    except _Unbalanced:
        raise PassPipelineError(f"'{pass_name}' option '{key}': unbalanced brackets in "
                                f"'{value}'") from None
    for entry in entries:
        paren = entry.find("(")
        if not entry:
            continue
        if paren < 0 or not entry.endswith(")"):
            raise PassPipelineError(f"'{pass_name}' option '{key}': expected 'op.name("
                                    f"pipeline)', got '{entry}'")
        anchor = entry[:paren].strip()
        if anchor != "func.func":
            raise PassPipelineError(f"'{pass_name}' option '{key}': irkit inlines only "
                                    f"func.func callables, so it has no use for a pipeline "
                                    f"on '{anchor}'")
        out = [("default-pipeline", translate_pipeline(entry[paren + 1:-1]))]
    return out


#: MLIR's options (`mlir-opt --help`) that irkit's passes spell differently or lack.
MLIR_PASS_OPTIONS: dict[str, dict[str, Callable]] = {
    "canonicalize": {
        "region-simplify": _region_simplify,
        "test-convergence": _test_convergence,
        "top-down": _top_down,
        "max-num-rewrites": _only_default("-1", "no limit on rewrites per iteration"),
        "enable-patterns": _unsupported("MLIR's pattern labels are C++ pattern names"),
        "disable-patterns": _unsupported("MLIR's pattern labels are C++ pattern names"),
    },
    "inline": {
        "default-pipeline": _nested_pipeline,
        "op-pipelines": _op_pipelines,
        "inlining-threshold": _only_default("4294967295", "every legal call is inlined"),
    },
}
