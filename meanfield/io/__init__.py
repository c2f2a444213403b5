"""Result files: checked output paths, atomic checksummed NetCDF, CF attributes, checkpoints,
and the datasets of density runs.
"""

from __future__ import annotations

from ._files import (
    FileCheckError,
    PathInUseError,
    PathLock,
    check_output_path,
    check_result_paths,
    data_checksum,
    read_netcdf,
    write_atomically,
    write_netcdf,
)
from ._conventions import (
    CONVENTIONS,
    COORD_ATTRS,
    PARAMETER_MEANINGS,
    describe,
    described_run,
    geographic_coords,
    history_line,
    is_descriptive,
    with_history,
)
from ._checkpoint import (
    Checkpoint,
    CheckpointError,
    CheckpointInUseError,
    check_same_run,
    fingerprint,
    load_checkpoint,
    locks_checkpoint,
    open_checkpoint,
    snapshot_of,
    snapshot_variables,
)
from ._dataset import density_dataset

__all__ = [
    "FileCheckError",
    "PathInUseError",
    "PathLock",
    "check_output_path",
    "check_result_paths",
    "data_checksum",
    "read_netcdf",
    "write_atomically",
    "write_netcdf",
    "CONVENTIONS",
    "COORD_ATTRS",
    "PARAMETER_MEANINGS",
    "describe",
    "described_run",
    "geographic_coords",
    "history_line",
    "is_descriptive",
    "with_history",
    "Checkpoint",
    "CheckpointError",
    "CheckpointInUseError",
    "check_same_run",
    "fingerprint",
    "load_checkpoint",
    "locks_checkpoint",
    "open_checkpoint",
    "snapshot_of",
    "snapshot_variables",
    "density_dataset",
]
