"""irkit-opt: read IR, (run passes,) verify and print it, as `mlir-opt` does.

    irkit-opt input.mlir [-o out.mlir] [--mlir-print-op-generic] [--mlir-print-debuginfo]
              [--allow-unregistered-dialect] [--split-input-file] [--no-verify]

Exit codes: 0 on success, 1 when the input has errors (printed as located diagnostics).
"""

from __future__ import annotations

import argparse
import sys


def build_arg_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="irkit-opt", description=__doc__.split("\n\n")[0])
    ap.add_argument("input", nargs="?", default="-", help="input file ('-' for stdin)")
    ap.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    ap.add_argument("--mlir-print-op-generic", action="store_true",
                    help="print every op in generic form")
    ap.add_argument("--mlir-print-debuginfo", action="store_true",
                    help="print locations with each op")
    ap.add_argument("--allow-unregistered-dialect", action="store_true",
                    help="keep ops of unknown dialects as opaque ops")
    ap.add_argument("--split-input-file", action="store_true",
                    help="process each chunk separated by '// -----' on its own")
    ap.add_argument("--no-verify", dest="verify", action="store_false",
                    help="do not run the verifier on the input")
    return ap


def split_chunks(text: str) -> list[str]:
    """Split on `// -----` lines; each chunk is padded so line numbers stay those of the file."""
    lines = text.splitlines(keepends=True)
    chunks, cur, start = [], [], 0
    for i, line in enumerate(lines):
        if line.strip() == "// -----":
            chunks.append("\n" * start + "".join(cur))
            cur, start = [], i + 1
        else:
            cur.append(line)
    chunks.append("\n" * start + "".join(cur))
    return chunks


def run(args, text: str, filename: str, out) -> int:
    from irkit.diagnostics import IRError
    from irkit.parser import parse_module
    from irkit.printer import print_op
    chunks = split_chunks(text) if args.split_input_file else [text]
    status = 0
    for i, chunk in enumerate(chunks):
        if i:
            out.write("// -----\n")
        try:
            module = parse_module(chunk, filename, allow_unregistered=args.allow_unregistered_dialect,
                                  verify=args.verify)
            text = print_op(module, generic=args.mlir_print_op_generic,
                            debuginfo=args.mlir_print_debuginfo)
            out.write(text if text.endswith("\n") else text + "\n")
        except IRError as e:
            sys.stderr.write(e.render() + "\n")
            status = 1
    return status


def main(argv: list[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv)
    if args.input == "-":
        text, filename = sys.stdin.read(), "<stdin>"
    else:
        try:
            with open(args.input, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            sys.stderr.write(f"irkit-opt: error: cannot read '{args.input}': {e.strerror}\n")
            return 1
        filename = args.input
    if args.output == "-":
        return run(args, text, filename, sys.stdout)
    with open(args.output, "w", encoding="utf-8") as out:
        return run(args, text, filename, out)


if __name__ == "__main__":
    sys.exit(main())
