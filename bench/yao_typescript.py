"""Yao TypeScript hooks: what the in-engine transpiler costs.

Three numbers, each the median of ``--repeat`` runs: evaluating the bundled sucrase
(``static/ts_transpile.js``) in a fresh QuickJS context (paid by every worker load and rebuild);
transpiling one generated 500-line TypeScript module inside QuickJS; and ``load_ts_module_set`` of a
src/ holding that module and an index.ts importing it (fork, prelude, sucrase, transpile, link).

Run: ``.venv/bin/python bench/yao_typescript.py`` (``--lines 500 --repeat 20``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import _quickjs

from agentctx_widgets.yao import load_ts_module_set
from agentctx_widgets.yao.typescript import _static_text

BLOCK = """export interface Row{n}<T = string> {{
  id: number;
  label?: T;
}}
export enum Kind{n} {{ A = "a", B = "b" }}
export function row{n}<T>(id: number, label?: T): Row{n}<T> {{
  const kind = (label as unknown as string)?.length ? Kind{n}.A : Kind{n}.B;
  return {{ id: id + {n}, label, kind }} as Row{n}<T>;
}}
"""


def module(lines: int) -> str:
    """A TypeScript module of ``lines`` lines: interfaces, enums, generics, casts, optional chaining."""
    out: list[str] = []
    n = 0
    while len(out) + BLOCK.count("\n") <= lines:
        out.extend(BLOCK.format(n=n).splitlines())
        n += 1
    out.extend("// padding" for _ in range(lines - len(out)))
    return "\n".join(out) + "\n"


def median_ms(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    bundle = _static_text("ts_transpile.js")
    source = module(args.lines)

    def evaluate() -> None:
        _quickjs.Context().eval(bundle)

    context = _quickjs.Context()
    context.eval(bundle)
    context.set("SOURCE", source)
    context.eval("var strip = __agentctx_sucrase.strip;")

    def transpile() -> None:
        context.eval("strip(SOURCE, 'src/big.ts', true).length")

    with tempfile.TemporaryDirectory() as folder:
        src = Path(folder) / "src"
        src.mkdir()
        (src / "big.ts").write_text(source)
        (src / "index.ts").write_text('import { row0 } from "./big";\n'
                                      "function Create(ctx: any, messages: any[]) { return { row: row0(1) }; }\n")

        def load() -> None:
            load_ts_module_set(src).close()

        load()  # the zygote starts once per process: not part of a load
        results = [("evaluate the sucrase bundle", median_ms(evaluate, args.repeat)),
                   (f"transpile a {args.lines}-line module", median_ms(transpile, args.repeat)),
                   ("load_ts_module_set (index.ts + that module)", median_ms(load, args.repeat))]
    print(f"bundle: {len(bundle) / 1024:.0f} KB; module: {source.count(chr(10))} lines; median of {args.repeat}")
    for label, ms in results:
        print(f"  {label:<46} {ms:8.1f} ms")


if __name__ == "__main__":
    main()
