"""The Transformer variants, checked together: random weights, discrete layers, causal masks, any β, limit sets.

Runs the five parts in ``validation/transformer_variants/``, each a script of its own that can also be run
alone and exits 1 on a mismatch of its exact facts:

(a) ``random_weights.py`` — Figure-5-style diagrams for V = +QᵀK and V = −QᵀK with per-system draws at
    d = 2 and 32, the energy E_β monotone along every system in the direction (3.12) predicts;
(b) ``discrete_layers.py`` — x_{k+1} = normalise(x_k + h v(x_k)): slope 1 ± 0.1 against the flow over four
    h, orthogonal tokens exactly equiangular, the discrete γ recursion tending to Theorem 6.8's ODE;
(c) ``causal_attention.py`` — the causal mask: the first token never moves, every token collapses onto it
    at rate 1/2 (100 systems);
(d) ``large_beta_staircase.py`` — n = 5, β = 500 … 4000: e^{-β}E_β and log E_β finite in arc-length time,
    merge jumps equal to e^{-β}(m_a m_b/β)(e^β - e^{β cos Δ}) to 1e-8 relative; USA at β = 800 and 4000 in the
    rescaled time s = e^β t: finite on S², two tokens' angle against the quadrature of its ODE to 1e-8 relative;
(e) ``rescaled_limit_sets.py`` — the limit sets of z = e^{-tV}x by the spectrum of V: the authors' 3 × 3
    example with two positive eigenvalues and one negative ends on codimension-2 flats; rank P(T) against n.

Every part writes its tables and figures into ``--output-dir``; this script prints one line per part and
writes transformer_variants.txt. About 3 minutes on one core.

Run:  python validation/transformer_variants.py [--output-dir DIR] [--parts a,c]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

PARTS = {
    "a": "random_weights",
    "b": "discrete_layers",
    "c": "causal_attention",
    "d": "large_beta_staircase",
    "e": "rescaled_limit_sets",
}
FOLDER = Path(__file__).resolve().parent / "transformer_variants"


def run_part(name: str, output_dir: Path) -> int:
    """Exit status of the part script ``name`` run with ``--output-dir output_dir``."""
    path = FOLDER / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"transformer_variants_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return int(module.main(["--output-dir", str(output_dir)]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=Path("validation_output"))
    parser.add_argument("--parts", default=",".join(PARTS), help="parts to run, e.g. a,c (default: all)")
    args = parser.parse_args(argv)
    chosen = [part.strip() for part in args.parts.split(",")]
    unknown = [part for part in chosen if part not in PARTS]
    if unknown:
        parser.error(f"--parts must name parts among {', '.join(PARTS)}, got {unknown}")
    args.output_dir.mkdir(parents=True, exist_ok=True)
    lines = []
    for part in chosen:
        start = time.perf_counter()
        status = run_part(PARTS[part], args.output_dir)
        line = f"({part}) {PARTS[part]:22s} {'PASS' if status == 0 else 'FAIL'}  {time.perf_counter() - start:6.1f} s"
        print(line, flush=True)
        lines.append(line)
    failed = [line for line in lines if "FAIL" in line]
    summary = "\n".join(lines) + f"\n{len(failed)} part(s) failed\n"
    (args.output_dir / "transformer_variants.txt").write_text(summary)
    print(f"{len(failed)} part(s) failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
