"""banditbench's console: a Snakemake logger plugin (``--logger banditbench``; profiles/default and
profiles/slurm turn it on).

Snakemake finds logger plugins by their top-level module name, ``snakemake_logger_plugin_<name>``,
anywhere on the import path: this package ships in the banditbench distribution beside ``banditbench``.
It prints one line when the jobs are planned, then a progress line (jobs done / total, rate, ETA),
rewritten in place on a terminal and printed now and then otherwise; warnings and errors in full; a
failed job as one block naming its rule, wildcards and log file; a fault outside the code (a run in
progress holding the lock, a full or read-only disk) as one line naming the file or folder.  Everything
else -- each job's ``input:`` / ``output:`` lists, reasons, resources -- stays in Snakemake's full log,
``.snakemake/log/<date>.snakemake.log``, which this plugin does not touch.  A dry run (``-n``) and
``-p`` / ``--verbose`` / ``--quiet`` / ``--debug-dag`` get Snakemake's own console output, those faults
still in one line.
"""

from dataclasses import dataclass, field
from typing import Optional

from snakemake_interface_logger_plugins.settings import LogHandlerSettingsBase

from snakemake_logger_plugin_banditbench.handler import ConsoleHandler


@dataclass
class LogHandlerSettings(LogHandlerSettingsBase):
    """``--logger-banditbench-interval`` (profile key ``logger-banditbench-interval``)."""

    interval: Optional[int] = field(
        default=60,
        metadata={
            "help": "Where the console is not a terminal (CI logs, Slurm output files): seconds between "
            "progress lines; a line is also printed at every tenth of the jobs (default 60).",
            "type": int,
        },
    )


class LogHandler(ConsoleHandler):
    """The handler Snakemake instantiates for ``--logger banditbench``."""


__all__ = ["LogHandler", "LogHandlerSettings"]
