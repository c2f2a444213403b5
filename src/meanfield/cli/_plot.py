"""``meanfield plot FILE.nc``: redraw the figure of a saved result, or another figure of it, or animate it.

The figure is chosen from what the file holds (``--kind auto``): a density on S¹ or a zonal grid gives the
t×θ heat map with the energy curve, a density on S² the orthographic maps, particles their snapshots, a
``compare`` study the W_p-against-n plot, a phase diagram or a Kuramoto bifurcation diagram their figures,
and a single Kuramoto run r(t). An output ending in ``.gif`` or ``.mp4`` (or ``--kind animation``) animates
the density or the particles over time instead.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import xarray as xr

from .. import plot
from ..io._files import check_output_path
from ..plot._animation import check_animation_path
from ._options import refuse_existing

__all__ = ["KINDS", "add_plot_arguments", "add_plot_parser", "plot_command"]

KINDS = ("auto", "density", "sphere", "marginal", "energy", "order-parameter", "particles", "paths",
         "inner-products", "comparison", "meanfield-limit", "phase-diagram", "bifurcation", "animation")
ANIMATIONS = (".gif", ".mp4")
FIGURES = (".png", ".pdf", ".svg")


def add_plot_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``plot`` subcommand to the ``subparsers`` of the ``meanfield`` command; return its parser."""
    parser = subparsers.add_parser(
        "plot",
        help="redraw a saved result: its figure (PNG), another figure of it (--kind), or an animation (GIF/MP4)",
        description="Redraw a saved result: the figure of the command that wrote it, another figure of it "
        "(--kind), or an animation over its output times (GIF through Pillow, MP4 through ffmpeg).",
    )
    add_plot_arguments(parser)
    return parser


def add_plot_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``meanfield plot`` to ``parser``."""
    parser.add_argument("file", type=Path, help="a NetCDF result written by meanfield (solve, compare, kuramoto, "
                        "phase-diagram) or by mf.solve / mf.simulate and to_netcdf")
    parser.add_argument("--kind", choices=KINDS, default="auto",
                        help="figure to draw (default: auto, the one the command that wrote the file draws)")
    parser.add_argument("--output", type=Path, default=None,
                        help="PNG (or PDF/SVG) of the figure, or GIF/MP4 of an animation (default: beside FILE, "
                        "named FILE_<kind>.png, or .gif for --kind animation)")
    parser.add_argument("--times", type=float, nargs="+", default=None,
                        help="times shown by snapshot figures (nearest outputs; default: four evenly spaced)")
    parser.add_argument("--frames", type=int, default=None,
                        help="at most this many animation frames (default: one per output time)")
    parser.add_argument("--fps", type=float, default=10.0, help="animation frames per second (default: 10)")
    parser.add_argument("--projection", choices=["orthographic", "latlon"], default="orthographic",
                        help="map projection of densities on S² in animations (default: orthographic)")
    parser.add_argument("--dpi", type=float, default=120.0, help="resolution of the image or frames (default: 120)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the figure if it exists (without it an existing file is never replaced)")


def plot_command(args: argparse.Namespace) -> int:
    """Draw what ``args`` ask of the file; write it; print where."""
    ds = _open(args.file)
    output = args.output
    kind = args.kind
    if output is not None and output.suffix.lower() in ANIMATIONS and kind == "auto":
        kind = "animation"
    if kind == "auto":
        kind = _default_kind(ds)
    if output is None:
        output = args.file.with_name(f"{args.file.stem}_{kind}" + (".gif" if kind == "animation" else ".png"))
    output = check_output_path(output, "--output")
    if output.resolve() == args.file.resolve():
        raise ValueError(f"--output {str(output)!r} would overwrite the result it draws")
    if output.suffix.lower() not in FIGURES + ANIMATIONS:
        raise ValueError(f"--output {str(output)!r} must end in one of {', '.join(FIGURES + ANIMATIONS)}")
    refuse_existing(args, output)
    if kind == "animation":
        try:
            check_animation_path(output)
        except RuntimeError as err:  # MP4 without ffmpeg: an error of the arguments, reported as one
            raise ValueError(str(err)) from err
        if "density" in ds:
            animation = plot.animate_density(ds, frames=args.frames, projection=args.projection)
        else:
            animation = plot.animate_particles(ds, frames=args.frames)
        plot.save_animation(animation, output, fps=args.fps, dpi=args.dpi)
    else:
        _figure(plot, ds, kind, args.times).savefig(output, dpi=args.dpi)
    print(f"wrote {output}")
    return 0


def _open(path: Path) -> xr.Dataset:
    """The dataset in ``path``, loaded into memory."""
    if not path.is_file():
        raise ValueError(f"{str(path)!r} does not exist or is not a regular file")
    try:
        with xr.open_dataset(path) as opened:
            return opened.load()
    except (OSError, ValueError, KeyError) as err:
        raise ValueError(f"{str(path)!r} is not a readable NetCDF file: {err}") from err


def _default_kind(ds: xr.Dataset) -> str:
    """The figure the command that wrote ``ds`` draws."""
    if "density" in ds:
        return "sphere" if "lat" in ds["density"].dims else "density"
    if "positions" in ds:
        return "particles"
    known = (("exponent", "meanfield-limit"), ("wasserstein", "comparison"), ("probability", "phase-diagram"),
             ("r_mean", "bifurcation"), ("order_parameter", "order-parameter"))
    for variable, kind in known:
        if variable in ds:
            return kind
    raise ValueError(f"no figure is known for a dataset with the variables {sorted(str(v) for v in ds.data_vars)}")


def _figure(plot: Any, ds: xr.Dataset, kind: str, times: list[float] | None) -> Any:
    """The Figure of ``kind`` drawn from ``ds``."""
    drawings = {
        "density": lambda: plot.density_map(ds),
        "sphere": lambda: plot.sphere_maps(ds, times),
        "marginal": lambda: plot.polar_marginal(ds, times),
        "energy": lambda: plot.energy_curve(ds),
        "order-parameter": lambda: plot.order_parameter_curve(ds),
        "particles": lambda: plot.particle_snapshots(ds, times),
        "paths": lambda: plot.particle_paths(ds),
        "inner-products": lambda: plot.inner_products(ds, times),
        "comparison": lambda: plot.comparison(ds),
        "meanfield-limit": lambda: plot.meanfield_limit(ds),
        "phase-diagram": lambda: plot.phase_diagram(ds),
        "bifurcation": lambda: plot.bifurcation(ds),
    }
    return drawings[kind]()
